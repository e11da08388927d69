import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// A PostgreSQL store met by people who should not be able to hurt it: a reader or another
/// application's login holding every lock it can take, a writer holding the write lock
/// too long, an owner rewriting the audit log's guard, a password typed into the URI, a
/// server that stopped answering. Runs when SUBDESK_TEST_POSTGRES names a server
/// (`scripts/pg-cluster`), except the password checks, which need no server.
final class PostgresHardeningTests: SubdeskTestCase, RunsOnEveryEngine {
    var base: String!
    var location: String!
    var suffix: String!

    func requirePostgres() throws {
        let base = try TestEngine.requirePostgres()
        self.base = base
        suffix = String(UUID().uuidString.prefix(8)).lowercased()
        location = Store.freshPostgresLocation(base)
        let initialized = try run(["db", "init", "--roles", "--db", location])
        XCTAssertEqual(initialized.status, 0, initialized.stderr)
    }

    /// `location` as the login `user`, with `extra` query parameters.
    func uri(as user: String, _ extra: String = "") throws -> String {
        var parts = try XCTUnwrap(URLComponents(string: location))
        parts.user = user
        return try XCTUnwrap(parts.string) + extra
    }

    /// A new login user, a member of `role` when one is named.
    func login(_ name: String, in role: String?) throws -> String {
        let user = "\(name)_\(suffix!)"
        _ = try engineQuery(location, "CREATE ROLE \(user) LOGIN" + (role.map { " IN ROLE \($0)" } ?? ""))
        return user
    }

    /// A connection of its own, as `user`, as psql or any other client would hold one.
    func connect(as user: String, application: String = "probe") throws -> PostgresConnection {
        try PostgresConnection(location: try PostgresLocation(try uri(as: user, "&application_name=\(application)")))
    }

    func cgi(_ db: String, _ body: Data, timeoutMs: Int = 3000) throws -> Result {
        try run(["ingest", "--cgi", "--db", db, "--busy-timeout-ms", String(timeoutMs)] + ReliabilityTests.policyFlags, stdin: body,
                env: ["REQUEST_METHOD": "POST", "GATEWAY_INTERFACE": "CGI/1.1", "REMOTE_ADDR": "192.0.2.9", "CONTENT_LENGTH": String(body.count)])
    }

    /// Signed notifications, one per line, and the subscriptions they are about.
    func bodies(_ count: Int, firstInstance: Int) throws -> (lines: [Data], subscriptions: [String]) {
        let all = try ReliabilityTests.signedBodies(count: count, firstInstance: firstInstance)
        let scratch = dir + "/scratch.db"
        let file = dir + "/bodies.ndjson"
        try all.write(to: URL(fileURLWithPath: file))
        XCTAssertEqual(try run(["ingest", "--db", scratch, "--quiet"] + ReliabilityTests.policyFlags + [file]).status, 0)
        let ids = try engineQuery(scratch, "SELECT original_transaction_id FROM subscriptions").split(separator: "\n").map(String.init)
        return (all.split(separator: UInt8(ascii: "\n")).map { Data($0) }, ids)
    }

    func assertRefused(_ what: String, _ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
        do {
            try body()
            XCTFail("\(what) was allowed", file: file, line: line)
        } catch let e as StoreError {
            XCTAssertEqual(e.sqlState, "42501", "\(what): \(e)", file: file, line: line)
        } catch {
            XCTFail("\(what): \(error)", file: file, line: line)
        }
    }

    /// Takes every lock `c` can take that a writer might wait for: the advisory key the
    /// store-wide lock once was, each subscription's advisory key, held for the session; a
    /// table lock on `store_changes` is refused it. Leaves a transaction open reading it.
    func holdEverythingItCan(_ c: PostgresConnection, schema: String, subscriptions: [String], who: String) throws {
        try c.execute("SELECT pg_advisory_lock(hashtext('subdesk:' || '\(schema)'))")
        for id in subscriptions {
            try c.execute("SELECT pg_advisory_lock(hashtext('\(schema)'), hashtext('\(id)'))")
        }
        for attempt in ["LOCK TABLE \(schema).store_changes IN EXCLUSIVE MODE", "LOCK TABLE \(schema).store_changes IN ROW EXCLUSIVE MODE",
                        "SELECT * FROM \(schema).store_changes FOR UPDATE", "SELECT * FROM \(schema).store_changes FOR KEY SHARE"] {
            assertRefused("\(who): \(attempt)") {
                do {
                    try c.execute("BEGIN; " + attempt)
                } catch {
                    try? c.execute("ROLLBACK")
                    throw error
                }
                try c.execute("ROLLBACK")
            }
        }
        // A stranger may not even see the table; a reader sits in a transaction reading it.
        try? c.execute("BEGIN; SELECT version FROM \(schema).store_changes")
    }

    func testAReaderAndAStrangerHoldingEveryLockTheyCanTakeDoNotStallIntake() throws {
        try requirePostgres()
        let schema = try XCTUnwrap(try PostgresLocation(location).schema)
        let (lines, subscriptions) = try bodies(6, firstInstance: 920_000)
        XCTAssertFalse(subscriptions.isEmpty)
        let intake = try login("intake", in: "subdesk_intake")
        let reader = try connect(as: try login("reader", in: "subdesk_read"), application: "report")
        // Another application's login in the same database: CONNECT granted by name, no subdesk role.
        let strangerName = try login("stranger", in: nil)
        _ = try engineQuery(location, "GRANT CONNECT ON DATABASE \"\(try engineQuery(location, "SELECT current_database()"))\" TO \(strangerName)")
        let stranger = try connect(as: strangerName, application: "other-app")

        // The webhook, as the intake host's login: every notification is stored at once,
        // first while the reader holds the locks, then while the stranger does.
        let started = Date()
        for (i, body) in lines.enumerated() {
            if i == 0 { try holdEverythingItCan(reader, schema: schema, subscriptions: subscriptions, who: "reader") }
            if i == lines.count / 2 {
                reader.close()
                try holdEverythingItCan(stranger, schema: schema, subscriptions: subscriptions, who: "stranger")
            }
            let r = try cgi(try uri(as: intake), body)
            XCTAssertTrue(r.stdout.hasPrefix("Status: 200 OK"), "notification \(i): \(r.stdout) \(r.stderr)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 20, "intake waited for the locks held")
        // A batch, and an operator's action (which writes alone), get through as well.
        let file = dir + "/bodies.ndjson"
        let batch = try run(["ingest", "--db", try uri(as: intake), "--quiet", "--busy-timeout-ms", "3000"] + ReliabilityTests.policyFlags + [file])
        XCTAssertEqual(batch.stdout, "ingested 0, duplicates \(lines.count), rejected 0\n", batch.stderr)
        let link = try run(["link", "user-920", subscriptions[0], "--db", location, "--busy-timeout-ms", "3000"])
        XCTAssertEqual(link.status, 0, link.stderr)
        XCTAssertEqual(try engineQuery(location, "SELECT count(*) FROM notifications"), String(lines.count))

        let doctor = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        XCTAssertTrue(doctor.stdout.contains("OK    write lock    free"), doctor.stdout)
        stranger.close()
    }

    /// Support may not lock any table of the store stronger than its own writes do (only
    /// `store_changes`, the writers' lock, which its writes take): each `LOCK TABLE ... IN
    /// ACCESS EXCLUSIVE MODE` is refused, and intake answers 200 beside the session that
    /// tried them all. Support still drops the subscriber a link left owning nothing.
    func testSupportCannotTakeATableLockThatStallsIntake() throws {
        try requirePostgres()
        let schema = try XCTUnwrap(try PostgresLocation(location).schema)
        let (lines, subscriptions) = try bodies(2, firstInstance: 925_000)
        let intake = try login("intake", in: "subdesk_intake")
        let support = try login("helpdesk", in: "subdesk_support")
        let session = try connect(as: support, application: "psql")
        XCTAssertEqual(try run(["ingest", "--db", try uri(as: intake), "--quiet"] + ReliabilityTests.policyFlags + [dir + "/bodies.ndjson"]).status, 0)
        try session.execute("BEGIN")
        for table in PostgresRoles.tables where table != "store_changes" {
            for mode in ["ACCESS EXCLUSIVE", "EXCLUSIVE", "SHARE ROW EXCLUSIVE", "SHARE"] {
                try session.execute("SAVEPOINT probe")
                assertRefused("support: LOCK TABLE \(table) IN \(mode) MODE") {
                    try session.execute("LOCK TABLE \(schema).\(table) IN \(mode) MODE")
                }
                try session.execute("ROLLBACK TO SAVEPOINT probe")
            }
        }
        // Its transaction stays open (holding what it could, ACCESS SHARE) while intake writes.
        try session.execute("SELECT count(*) FROM \(schema).subscribers")
        let started = Date()
        let r = try cgi(try uri(as: intake), lines[0])
        XCTAssertTrue(r.stdout.hasPrefix("Status: 200 OK"), r.stdout + r.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        try session.execute("ROLLBACK")
        session.close()
        // A link as support moves the subscription and drops the subscriber left owning nothing.
        let before = try engineQuery(location, "SELECT subscriber_id FROM subscriptions WHERE original_transaction_id = '\(subscriptions[0])'")
        let link = try run(["link", "user-925", subscriptions[0], "--db", try uri(as: support)])
        XCTAssertEqual(link.status, 0, link.stderr)
        XCTAssertEqual(try engineQuery(location, "SELECT count(*) FROM subscribers WHERE id = \(before) AND user_id IS NULL"), "0",
                       "the subscriber left owning nothing was dropped")
    }

    func testALoginWithNoSubdeskRoleCannotConnectAfterDbInitRoles() throws {
        try requirePostgres()
        let stranger = try login("outsider", in: nil)
        XCTAssertThrowsError(try connect(as: stranger)) { error in
            XCTAssertTrue("\(error)".contains("permission denied for database"), "\(error)")
        }
        let refused = try run(["counts", "--db", try uri(as: stranger)])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("permission denied for database"), refused.stderr)
        // A member of a subdesk role still connects, through the role.
        let reader = try login("member", in: "subdesk_read")
        let counts = try run(["counts", "--db", try uri(as: reader)])
        XCTAssertEqual(counts.status, 0, counts.stderr)
        let doctor = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        XCTAssertFalse(doctor.stdout.contains("connect "), doctor.stdout)
    }

    func testDoctorNamesWhoHoldsTheWriteLockWhileIntakeWaits() throws {
        try requirePostgres()
        let (lines, _) = try bodies(2, firstInstance: 930_000)
        let holder = try connect(as: try login("nightly", in: "subdesk_operator"), application: "nightly-fix")
        let pid = try XCTUnwrap(holder.first("SELECT pg_backend_pid()") { $0.int(0) })
        try holder.execute("BEGIN; LOCK TABLE store_changes IN EXCLUSIVE MODE")

        let waited = try cgi(location, lines[0], timeoutMs: 1500)
        XCTAssertTrue(waited.stdout.hasPrefix("Status: 503"), waited.stdout)
        let doctor = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        let line = try XCTUnwrap(doctor.stdout.split(separator: "\n").first { $0.contains("write lock") }, doctor.stdout)
        XCTAssertTrue(line.hasPrefix("WARN  write lock    held by database user nightly_\(suffix!) (pid \(pid), application \"nightly-fix\", "
                                     + "in a transaction since "), String(line))
        XCTAssertTrue(line.contains("EXCLUSIVE lock on store_changes"), String(line))

        try holder.execute("ROLLBACK")
        XCTAssertTrue(try cgi(location, lines[0]).stdout.hasPrefix("Status: 200 OK"))
        XCTAssertTrue(try run(["doctor", "--db", location] + ReliabilityTests.policyFlags).stdout.contains("OK    write lock    free"))
        // A lock on any other table of the store that a write would wait for is named too.
        try holder.execute("BEGIN; LOCK TABLE subscriptions IN SHARE MODE")
        let other = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        let named = try XCTUnwrap(other.stdout.split(separator: "\n").first { $0.contains("write lock") }, other.stdout)
        XCTAssertTrue(named.hasPrefix("WARN  write lock    held by database user nightly_\(suffix!)") && named.contains("SHARE lock on subscriptions"),
                      String(named))
        try holder.execute("ROLLBACK")
        holder.close()
    }

    func testAnAuditFunctionReplacedByTheOwnerIsReportedByDoctor() throws {
        try requirePostgres()
        _ = try engineQuery(location, "INSERT INTO audit_log (at_ms, operator, action, outcome) VALUES (1, 'x', 'override_grant', 'ok')")
        XCTAssertTrue(try run(["doctor", "--db", location] + ReliabilityTests.policyFlags).stdout
            .contains("OK    audit log     append-only (triggers in place), their functions unchanged"))
        // The owner neuters the guard without touching a trigger, and rewrites history.
        _ = try engineQuery(location, "CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$")
        XCTAssertEqual(try engineQuery(location, "UPDATE audit_log SET outcome = 'rewritten' RETURNING outcome"), "rewritten")
        let doctor = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        XCTAssertEqual(doctor.status, 1)
        XCTAssertTrue(doctor.stdout.contains("FAIL  audit log     function audit_log_append_only() is not subdesk's: its body was replaced"),
                      doctor.stdout)
        // A trigger switched to fire only on replicas guards nothing either.
        _ = try engineQuery(location, "ALTER TABLE audit_log ENABLE REPLICA TRIGGER audit_log_operator")
        let again = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        XCTAssertTrue(again.stdout.contains("trigger audit_log_operator fires only in replication"), again.stdout)
    }

    /// Each thing an owner can add on the audit log to drop, rewrite or hide entries while
    /// subdesk's own triggers stay whole is a FAIL that names it.
    func testDoctorFailsNamingAnOwnersTriggerRuleOrPolicyOnTheAuditLog() throws {
        try requirePostgres()
        func doctorSays() throws -> (status: Int32, line: String) {
            let d = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
            return (d.status, String(d.stdout.split(separator: "\n").first { $0.contains("audit log") } ?? ""))
        }
        XCTAssertTrue(try doctorSays().line.hasPrefix("OK    audit log"))
        let additions: [(add: String, drop: String, named: String)] = [
            ("CREATE FUNCTION swallow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$; "
             + "CREATE TRIGGER a_swallow BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION swallow()",
             "DROP TRIGGER a_swallow ON audit_log", "trigger a_swallow on audit_log is not subdesk's"),
            ("CREATE FUNCTION ceo() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.operator := 'ceo'; RETURN NEW; END $$; "
             + "CREATE TRIGGER zz_ceo BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION ceo()",
             "DROP TRIGGER zz_ceo ON audit_log", "trigger zz_ceo on audit_log is not subdesk's"),
            ("CREATE RULE quiet AS ON INSERT TO audit_log DO INSTEAD NOTHING", "DROP RULE quiet ON audit_log",
             "rule quiet on audit_log is not subdesk's"),
            ("ALTER TABLE audit_log ENABLE ROW LEVEL SECURITY; CREATE POLICY hide ON audit_log USING (action <> 'override_grant')",
             "DROP POLICY hide ON audit_log; ALTER TABLE audit_log DISABLE ROW LEVEL SECURITY",
             "row-level security policy hide on audit_log is not subdesk's"),
            // A child table's rows are listed with the log's, unguarded.
            ("CREATE TABLE zz_child () INHERITS (audit_log); "
             + "INSERT INTO zz_child (id, at_ms, operator, action, outcome) VALUES (999999, 0, 'nobody', 'override_grant', 'ok')",
             "DROP TABLE zz_child", "inherits from audit_log"),
            ("ALTER TABLE audit_log ADD CONSTRAINT no_grants CHECK (action <> 'override_grant') NOT VALID",
             "ALTER TABLE audit_log DROP CONSTRAINT no_grants", "constraint no_grants on audit_log is not subdesk's"),
        ]
        for addition in additions {
            _ = try engineQuery(location, addition.add)
            let said = try doctorSays()
            XCTAssertEqual(said.status, 1, addition.add)
            XCTAssertTrue(said.line.hasPrefix("FAIL  audit log") && said.line.contains(addition.named), "\(addition.add): \(said.line)")
            _ = try engineQuery(location, addition.drop)
            XCTAssertTrue(try doctorSays().line.hasPrefix("OK    audit log"), addition.drop)
        }
    }

    /// An override whose audit entry something on the audit log drops fails, and is undone.
    func testAnOverrideWhoseAuditEntryIsDroppedFailsAndIsUndone() throws {
        try requirePostgres()
        let (_, subscriptions) = try bodies(1, firstInstance: 950_000)
        XCTAssertEqual(try run(["ingest", "--db", location, "--quiet"] + ReliabilityTests.policyFlags + [dir + "/bodies.ndjson"]).status, 0)
        for (add, drop) in [("CREATE FUNCTION swallow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$; "
                             + "CREATE TRIGGER a_swallow BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION swallow()",
                             "DROP TRIGGER a_swallow ON audit_log"),
                            ("CREATE RULE quiet AS ON INSERT TO audit_log DO INSTEAD NOTHING", "DROP RULE quiet ON audit_log")] {
            _ = try engineQuery(location, add)
            let granted = try run(["override", "grant", subscriptions[0], "--until", "+7d", "--reason", "goodwill", "--db", location])
            XCTAssertNotEqual(granted.status, 0, "\(add): \(granted.stdout)")
            XCTAssertTrue(granted.stderr.contains("the audit entry was not written"), granted.stderr)
            XCTAssertEqual(try engineQuery(location, "SELECT count(*) FROM overrides"), "0", add)
            _ = try engineQuery(location, drop)
        }
        XCTAssertEqual(try run(["override", "grant", subscriptions[0], "--until", "+7d", "--reason", "goodwill", "--db", location]).status, 0)
        XCTAssertEqual(try engineQuery(location, "SELECT count(*) FROM overrides"), "1")
    }

    func testAPasswordInTheURIQueryOrAKeywordStringIsRefusedAndNeverPrinted() throws {
        let secret = "hunter2-\(UUID().uuidString.prefix(6))"
        let body = Data(#"{"signedPayload":"x"}"#.utf8)
        let cgiEnvironment = ["REQUEST_METHOD": "POST", "GATEWAY_INTERFACE": "CGI/1.1", "CONTENT_LENGTH": String(body.count)]
        for db in ["postgresql://ana@/postgres?host=/nonexistent&password=\(secret)&schema=s",
                   "postgresql://ana@/postgres?PassWord=\(secret)",
                   "host=db.internal password=\(secret) dbname=subdesk",
                   "dbname=subdesk password='\(secret) with spaces'"] {
            var results: [(String, Result)] = []
            results.append(("doctor", try run(["doctor", "--db", db])))
            results.append(("ingest", try run(["ingest", "--db", db, "-"], stdin: body)))
            results.append(("cgi", try run(["ingest", "--cgi", "--db", db], stdin: body, env: cgiEnvironment)))
            results.append(("counts", try run(["counts"], env: ["SUBDESK_DB": db])))
            results.append(("db init", try run(["db", "init", "--roles", "--db", db])))
            for (command, r) in results {
                XCTAssertNotEqual(r.status, 0, "\(command) with \(db)")
                XCTAssertFalse((r.stdout + r.stderr).contains(secret.prefix(7)), "\(command) printed the password: \(r.stdout) \(r.stderr)")
                let said = r.stdout + r.stderr
                XCTAssertTrue(db.hasPrefix("postgresql:") ? said.contains("PGPASSFILE") : said.contains("libpq keyword string"),
                              "\(command) with \(db): \(said)")
            }
            XCTAssertTrue(results[2].1.stdout.hasPrefix("Status: 503"), results[2].1.stdout)
        }
        XCTAssertEqual(PostgresLocation.redacted("host=x password = 'a \\' b' user=u"), "host=x password =*** user=u")
        XCTAssertEqual(PostgresLocation.redacted("postgresql://u:pw@h/d?password=pw&sslmode=require"),
                       "postgresql://u:***@h/d?password=***&sslmode=require")
    }

    /// The client key's passphrase and the OAuth client secret are secrets too: refused in
    /// a URI, naming the key and never its value, and masked when a location is printed.
    func testEverySecretLibpqKeyIsRefusedInAURIAndMasked() throws {
        let secret = "hunter3-\(UUID().uuidString.prefix(6))"
        for key in ["sslpassword", "SSLPassword", "oauth_client_secret"] {
            let db = "postgresql://ana@/postgres?host=/nonexistent&sslmode=require&\(key)=\(secret)"
            for args in [["doctor", "--db", db], ["counts", "--db", db], ["db", "init", "--roles", "--db", db]] {
                let r = try run(args)
                let said = r.stdout + r.stderr
                XCTAssertTrue([1, 2].contains(r.status), "\(args[0]) with \(key) exited \(r.status): \(said)")
                XCTAssertFalse(said.contains(secret.prefix(7)), "\(args[0]) printed the \(key): \(said)")
                XCTAssertTrue(said.contains("the URI holds a secret (\(key.lowercased())=)"), "\(args[0]) with \(key): \(said)")
                XCTAssertTrue(said.contains("\(key)=***"), "\(args[0]) with \(key): \(said)")
            }
            XCTAssertEqual(PostgresLocation.redacted("host=x \(key)='\(secret)' user=u"), "host=x \(key)=*** user=u")
        }
    }

    func testAStoppedServerAnswers503WithinSeconds() throws {
        try requirePostgres()
        let (lines, _) = try bodies(1, firstInstance: 940_000)
        let dataDirectory = try engineQuery(location, "SHOW data_directory")
        let pidText = try String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8).split(separator: "\n").first
        let postmaster = try XCTUnwrap(pidText.flatMap { pid_t($0.trimmingCharacters(in: .whitespaces)) })
        // Stopped, the postmaster still accepts connections into its socket's queue and
        // never answers them, as a hung or swapping server does.
        XCTAssertEqual(kill(postmaster, SIGSTOP), 0)
        defer { kill(postmaster, SIGCONT) }
        let started = Date()
        let r = try cgi(location, lines[0])
        let seconds = Date().timeIntervalSince(started)
        XCTAssertTrue(r.stdout.hasPrefix("Status: 503"), r.stdout)
        XCTAssertTrue(r.stderr.contains("timeout expired"), r.stderr)
        XCTAssertLessThan(seconds, 15, "answered after \(seconds) s")
        kill(postmaster, SIGCONT)
        XCTAssertTrue(try cgi(location, lines[0]).stdout.hasPrefix("Status: 200 OK"))
    }

    func testIntakeBoundsTheServersWaitsUnlessTheURIDoes() throws {
        try requirePostgres()
        let store = try Store(path: location, busyTimeoutMs: 10_000, mode: .existing)
        try store.upkeep.boundServerWaitsForIntake()
        XCTAssertEqual(try store.db.first("SHOW statement_timeout") { $0.string(0) }, "30s")
        XCTAssertEqual(try store.db.first("SHOW idle_in_transaction_session_timeout") { $0.string(0) }, "30s")
        let chosen = try Store(path: location + "&options=-c%20statement_timeout%3D7s", mode: .existing)
        try chosen.upkeep.boundServerWaitsForIntake()
        XCTAssertEqual(try chosen.db.first("SHOW statement_timeout") { $0.string(0) }, "7s")
        // A dashboard or a migration keeps the server's defaults.
        let reading = try Store(path: location, mode: .reading)
        XCTAssertEqual(try reading.db.first("SHOW statement_timeout") { $0.string(0) }, "0")
    }
}
