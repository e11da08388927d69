import Foundation
import XCTest
import SubdeskTestKit
import SubscriptionCore

/// A PostgreSQL cluster of a test's own (`scripts/pg-cluster`), for what touches the whole
/// server: roles made from nothing, a small number of connection slots.
final class ThrowawayCluster {
    let directory: String

    /// Starts one with `settings` (`max_connections=20`) on a socket in a new folder.
    init(settings: [String] = []) throws {
        // Its output goes to a file, and it is waited for with waitpid: the server it starts
        // keeps what it inherited open, so a pipe would never end.
        let log = NSTemporaryDirectory() + "pg-cluster-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let status = Self.script(["start"] + settings, output: log)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        guard status == 0, let line = output.split(separator: "\n").first(where: { $0.hasPrefix("/") }) else {
            throw XCTSkip("pg-cluster start failed: \(output)")
        }
        directory = String(line)
    }

    /// `database` on this cluster as `user`, through the socket.
    func uri(_ user: String, _ database: String = "postgres") -> String { "postgresql://\(user)@/\(database)?host=\(directory)" }

    /// psql as the cluster's superuser; the output, or the error's text.
    @discardableResult
    func superuser(_ sql: String, database: String = "postgres") throws -> String {
        try runToEnd("/usr/bin/env", ["psql", "-h", directory, "-U", "postgres", "-d", database, "-AtqX", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func stop() { _ = Self.script(["stop", directory], output: "/dev/null") }

    /// Runs `scripts/pg-cluster` with `arguments`, its output into the file `output`; its status.
    static func script(_ arguments: [String], output: String) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let path = SubdeskTestCase.repoRoot + "/scripts/pg-cluster"
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status >> 8) & 0xff
    }
}

/// The README's PostgreSQL set-up, run as written against a cluster of the test's own, and
/// an owner that may not create roles told so. Runs when SUBDESK_TEST_POSTGRES is set (the
/// PostgreSQL pass), as the other PostgreSQL tests do.
final class PostgresSetUpTests: SubdeskTestCase, RunsOnEveryEngine {
    var cluster: ThrowawayCluster!

    override func setUpWithError() throws {
        try super.setUpWithError()
        _ = try TestEngine.requirePostgres()
        cluster = try ThrowawayCluster()
    }

    override func tearDownWithError() throws {
        cluster?.stop()
        try super.tearDownWithError()
    }

    /// The shell lines of the README's PostgreSQL set-up, comments dropped.
    static func readmeSetUp() throws -> [String] {
        let readme = try String(contentsOfFile: repoRoot + "/README.md", encoding: .utf8)
        let section = try XCTUnwrap(readme.range(of: "## PostgreSQL, for teams"), "the README has no PostgreSQL section")
        let rest = readme[section.upperBound...]
        let open = try XCTUnwrap(rest.range(of: "```sh\n"))
        let close = try XCTUnwrap(rest[open.upperBound...].range(of: "```"))
        return rest[open.upperBound..<close.lowerBound].split(separator: "\n").map { line in
            String(line.range(of: " #").map { line[..<$0.lowerBound] } ?? line[...]).trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// Each line as written, on this machine: `sudo -u postgres` is the cluster's superuser
    /// over its socket, the server `db.internal` is the socket, the SQLite store is a demo
    /// store; the packages are CI's and the dashboard is interactive, so those two are
    /// not run (but must be there).
    func testTheReadmesPostgresSetUpRunsAsWritten() throws {
        let lines = try Self.readmeSetUp()
        let local = dir + "/local.db"
        XCTAssertEqual(try run(["demo", "--no-dashboard", "--copies", "1", "--db", local]).status, 0)
        let bin = dir + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin + "/subdesk", withDestinationPath: Self.binary)
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["PGHOST"] = cluster.directory
        environment["PGUSER"] = "postgres"
        environment["XDG_DATA_HOME"] = dir + "/data"
        environment["XDG_CONFIG_HOME"] = dir + "/config"
        environment.removeValue(forKey: "SUBDESK_DB")
        environment.removeValue(forKey: "SUBDESK_CONFIG")
        var ran: [String] = [], skipped: [String] = []
        for line in lines {
            if line.hasPrefix("apt-get ") || line.range(of: #"^subdesk --db '[^']*'$"#, options: .regularExpression) != nil {
                skipped.append(line)
                continue
            }
            let here = line.replacingOccurrences(of: "sudo -u postgres ", with: "")
                .replacingOccurrences(of: "@db.internal/subdesk", with: "@/subdesk?host=\(cluster.directory)")
                .replacingOccurrences(of: "~/.local/share/subdesk/subdesk.db", with: local)
            let r = try runToEnd("/bin/sh", ["-c", here], environment: environment)
            XCTAssertEqual(r.status, 0, "README: \(line)\n\(r.output)")
            ran.append(line)
        }
        XCTAssertEqual(skipped.count, 2, "the package line and the dashboard: \(skipped)")
        XCTAssertTrue(ran.contains { $0.contains("createuser") } && ran.contains { $0.contains("db init --roles") }
                      && ran.contains { $0.contains("migrate") }, "\(ran)")
        // The store the owner set up holds the copy, and its roles exist.
        let store = cluster.uri("subdesk", "subdesk")
        XCTAssertEqual(try engineQuery(store, "SELECT count(*) FROM notifications"), try engineQuery(local, "SELECT count(*) FROM notifications"))
        XCTAssertEqual(try cluster.superuser("SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles WHERE rolname LIKE 'subdesk\\_%'"),
                       PostgresRoles.all.sorted().joined(separator: ","))
    }

    /// An owner made by a plain `createuser` (no CREATEROLE) is told what it lacks and what
    /// to do, not that no subdesk role may.
    func testAnOwnerThatMayNotCreateRolesIsToldWhatToDo() throws {
        try cluster.superuser("CREATE ROLE plain LOGIN")
        try cluster.superuser("CREATE DATABASE plain OWNER plain")
        let r = try run(["db", "init", "--roles", "--db", cluster.uri("plain", "plain")])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("plain may not create roles"), r.stderr)
        XCTAssertTrue(r.stderr.contains("CREATEROLE") && r.stderr.contains("superuser"), r.stderr)
        XCTAssertFalse(r.stderr.contains("no subdesk role may"), r.stderr)
        // Given CREATEROLE, as the message says, it succeeds.
        try cluster.superuser("ALTER ROLE plain CREATEROLE")
        let again = try run(["db", "init", "--roles", "--db", cluster.uri("plain", "plain")])
        XCTAssertEqual(again.status, 0, again.stderr)
    }
}
