import Foundation
import XCTest
import SubdeskTestKit
@testable import SubscriptionCore

/// `subdesk db login` and `doctor`'s count of connection slots, on a cluster of the test's
/// own with 12 connection slots (3 of them kept for superusers), as the README sets a store
/// up: an owner that may create roles, its database, `db init --roles`. Runs when
/// SUBDESK_TEST_POSTGRES is set (the PostgreSQL pass), as the other PostgreSQL tests do.
final class PostgresLoginTests: SubdeskTestCase, RunsOnEveryEngine {
    var cluster: ThrowawayCluster!
    var store: String!

    override func setUpWithError() throws {
        try super.setUpWithError()
        _ = try TestEngine.requirePostgres()
        cluster = try ThrowawayCluster(settings: ["max_connections=12"])
        try cluster.superuser("CREATE ROLE subdesk LOGIN CREATEROLE")
        try cluster.superuser("CREATE DATABASE subdesk OWNER subdesk")
        store = cluster.uri("subdesk", "subdesk")
        let initialized = try run(["db", "init", "--roles", "--db", store])
        XCTAssertEqual(initialized.status, 0, initialized.stderr)
    }

    override func tearDownWithError() throws {
        cluster?.stop()
        try super.tearDownWithError()
    }

    func login(_ arguments: [String]) throws -> Result {
        try run(["db", "login"] + arguments + ["--db", store])
    }

    /// The doctor lines about `check`.
    func doctorLines(_ check: String) throws -> (status: Int32, lines: [String], all: String) {
        let doctor = try run(["doctor", "--db", store] + ReliabilityTests.policyFlags)
        let lines = doctor.stdout.split(separator: "\n").map(String.init).filter { $0.dropFirst(6).hasPrefix(check + " ") }
        return (doctor.status, lines, doctor.stdout + doctor.stderr)
    }

    /// A reader whose sessions hold every slot its limit allows cannot keep intake or doctor
    /// out: on a server of 12 slots, `db login` gives it 4.
    func testAReaderHoldingEverySlotItsLimitAllowsLeavesRoomForIntakeAndDoctor() throws {
        let made = try login(["reader1", "--role", "read"])
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertTrue(made.stdout.contains("created the login reader1: a member of subdesk_read, connection limit 4"), made.stdout)
        XCTAssertEqual(try login(["hook", "--role", "intake"]).status, 0)
        XCTAssertEqual(try cluster.superuser("SELECT rolconnlimit FROM pg_roles WHERE rolname = 'reader1'"), "4")

        // The reader opens as many sessions as it can; the server stops it at its limit.
        var held: [PostgresConnection] = []
        var refusal = ""
        for _ in 0..<12 {
            do {
                held.append(try PostgresConnection(location: try PostgresLocation(cluster.uri("reader1", "subdesk"))))
            } catch {
                refusal = "\(error)"
                break
            }
        }
        XCTAssertEqual(held.count, 4, "the reader holds as many sessions as its limit")
        XCTAssertTrue(refusal.contains("too many connections for role \"reader1\""), refusal)

        // Intake still stores a notification, and doctor still connects.
        let body = try XCTUnwrap(try ReliabilityTests.signedBodies(count: 1, firstInstance: 940_000).split(separator: UInt8(ascii: "\n")).first)
        let ingested = try run(["ingest", "--cgi", "--db", cluster.uri("hook", "subdesk")] + ReliabilityTests.policyFlags, stdin: Data(body),
                               env: ["REQUEST_METHOD": "POST", "GATEWAY_INTERFACE": "CGI/1.1", "REMOTE_ADDR": "192.0.2.9",
                                     "CONTENT_LENGTH": String(body.count)])
        XCTAssertTrue(ingested.stdout.hasPrefix("Status: 200 OK"), ingested.stdout + ingested.stderr)
        let doctor = try doctorLines("connections")
        XCTAssertTrue(doctor.all.contains("OK    store "), doctor.all)
        XCTAssertEqual(doctor.lines, ["OK    connections   max_connections 12, 3 reserved for superusers: read, support and operator logins may hold 4 "
                                      + "(reader1 4), leaving 5 for intake and the owner (5 needed)"], doctor.all)
        held.forEach { $0.close() }
    }

    /// Read and support logins whose limits together leave intake and the owner too few
    /// slots fail doctor, named; one without a limit is a warning, named.
    func testDoctorFailsNamingLoginsWhoseLimitsLeaveNoRoom() throws {
        XCTAssertEqual(try login(["reader1", "--role", "read"]).status, 0)
        XCTAssertEqual(try doctorLines("connections").lines.first?.hasPrefix("OK "), true)
        XCTAssertEqual(try login(["helpdesk", "--role", "support"]).status, 0)
        try cluster.superuser("CREATE ROLE loose LOGIN IN ROLE subdesk_read")
        let doctor = try doctorLines("connections")
        XCTAssertEqual(doctor.status, 1, doctor.all)
        XCTAssertEqual(doctor.lines.count, 2, doctor.all)
        XCTAssertTrue(doctor.lines[0].hasPrefix("WARN  connections   logins other than intake's without a connection limit: loose:"), doctor.all)
        XCTAssertTrue(doctor.lines[1].hasPrefix("FAIL  connections   the read, support and operator logins' limits (helpdesk 4, reader1 4) together take 8 "
                                                + "of 9 slots (max_connections 12, 3 reserved for superusers), leaving 1: fewer than the 5 "
                                                + "intake and the owner need"), doctor.all)
        // Lowered, as doctor says, they fit again.
        XCTAssertEqual(try login(["helpdesk", "--role", "support", "--connection-limit", "2"]).status, 0)
        XCTAssertEqual(try login(["reader1", "--role", "read", "--connection-limit", "2"]).status, 0)
        XCTAssertEqual(try doctorLines("connections").lines.filter { $0.hasPrefix("FAIL") }, [])
    }

    /// A login is made or changed with its bounds, the only subdesk role it has is the one
    /// named, its password is kept hashed, and nothing a user types reaches SQL unchecked.
    func testALoginIsMadeOrChangedWithItsBoundsAndRefusedWhatIsNoLogin() throws {
        let password = dir + "/password"
        try "s3cret'; DROP TABLE audit_log; --\n".write(toFile: password, atomically: true, encoding: .utf8)
        chmod(password, 0o600)
        let made = try login(["web-1", "--role", "support", "--password-file", password, "--idle-timeout", "2s"])
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertTrue(made.stdout.contains("idle_in_transaction_session_timeout 2s") && made.stdout.contains("password set"), made.stdout)
        func facts() throws -> String {
            try cluster.superuser("""
                SELECT r.rolconnlimit || ' ' || (SELECT string_agg(g.rolname, ',' ORDER BY g.rolname) FROM pg_auth_members m
                    JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid) || ' ' || array_to_string(s.setconfig, ',')
                    || ' ' || (a.rolpassword LIKE 'SCRAM-SHA-256$%')::text
                FROM pg_roles r JOIN pg_authid a ON a.oid = r.oid
                LEFT JOIN pg_db_role_setting s ON s.setrole = r.oid AND s.setdatabase = 0 WHERE r.rolname = 'web-1'
                """)
        }
        XCTAssertEqual(try facts(), "4 subdesk_support statement_timeout=60000,lock_timeout=10000,idle_in_transaction_session_timeout=2000 true")
        XCTAssertEqual(try cluster.superuser("SELECT count(*) FROM audit_log", database: "subdesk"), "0")
        // Changed to another role: that role's bounds, the support role taken away, the password kept.
        let changed = try login(["web-1", "--role", "operator"])
        XCTAssertEqual(changed.status, 0, changed.stderr)
        XCTAssertTrue(changed.stdout.hasPrefix("changed the login web-1: a member of subdesk_operator, connection limit 3"), changed.stdout)
        XCTAssertEqual(try facts(), "3 subdesk_operator statement_timeout=1800000,lock_timeout=60000,idle_in_transaction_session_timeout=60000 true")

        for (arguments, words) in [
            (["x\"; DROP ROLE subdesk; --", "--role", "read"], "a login's name is 1 to 63 letters"),
            (["pg_monitor", "--role", "read"], "PostgreSQL's own"),
            (["subdesk_read", "--role", "read"], "one of subdesk's group roles"),
            (["bob", "--role", "admin"], "--role is read, support, operator or intake"),
            (["bob", "--role", "subdesk_read"], "--role is read, support, operator or intake"),
            (["bob"], "needs --role"),
            (["bob", "--role", "read", "--connection-limit", "0"], "--connection-limit is a number from 1 to"),
            (["bob", "--role", "read", "--connection-limit", "99999999999999999999"], "--connection-limit is a number from 1 to"),
            (["bob", "--role", "read", "--statement-timeout", "2d"], "must be from 1ms to 1d"),
        ] {
            let r = try login(arguments)
            XCTAssertEqual(r.status, 2, "\(arguments): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(words), "\(arguments): \(r.stderr)")
        }
        // A password file is taken as written, less its final newline: a second line (a blank
        // one here) is refused, not trimmed away silently.
        let twoLines = dir + "/two-lines"
        try "pw\n\n".write(toFile: twoLines, atomically: true, encoding: .utf8)
        chmod(twoLines, 0o600)
        let refused = try login(["bob", "--role", "read", "--password-file", twoLines])
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("a password is one line of 1 to 1024 bytes (only its final newline is dropped)"), refused.stderr)
        // What is no ordinary login is not changed: the owner running it, a superuser, a group.
        try cluster.superuser("CREATE ROLE admin2 SUPERUSER LOGIN")
        try cluster.superuser("CREATE ROLE team NOLOGIN")
        for (name, words) in [("subdesk", "the user running this"), ("admin2", "is a superuser"), ("team", "cannot log in")] {
            let r = try login([name, "--role", "read"])
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains(words), "\(name): \(r.stderr)")
        }
        XCTAssertEqual(try cluster.superuser("SELECT rolconnlimit FROM pg_roles WHERE rolname IN ('admin2', 'team', 'subdesk') ORDER BY 1"), "-1\n-1\n-1")
        // Nor, run by a superuser, the store's owner or a member of its role; nor a login
        // with a privilege or a membership that is not subdesk's: each said, nothing changed.
        try cluster.superuser("CREATE ROLE deputy LOGIN IN ROLE subdesk")
        try cluster.superuser("CREATE ROLE maker LOGIN CREATEDB BYPASSRLS")
        try cluster.superuser("CREATE ROLE watcher LOGIN IN ROLE pg_read_all_data")
        for (name, words) in [("subdesk", "subdesk owns the store"), ("deputy", "deputy is a member of subdesk, the store's owner"),
                              ("maker", "maker has CREATEDB, BYPASSRLS"), ("watcher", "watcher is a member of pg_read_all_data")] {
            let r = try run(["db", "login", name, "--role", "read", "--db", cluster.uri("postgres", "subdesk")])
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains(words), "\(name): \(r.stderr)")
        }
        XCTAssertEqual(try cluster.superuser("""
            SELECT string_agg(u.rolname || ' ' || u.rolconnlimit || ' ' || (SELECT count(*) FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
                WHERE m.member = u.oid AND g.rolname LIKE 'subdesk\\_%'), ',' ORDER BY u.rolname)
            FROM pg_roles u WHERE u.rolname IN ('subdesk', 'deputy', 'maker', 'watcher')
            """), "deputy -1 0,maker -1 0,subdesk -1 0,watcher -1 0")
        // An owner that may not create roles is told so, and what to do.
        try cluster.superuser("CREATE ROLE plain LOGIN IN ROLE subdesk_read")
        let plain = try run(["db", "login", "carol", "--role", "read", "--db", cluster.uri("plain", "subdesk")])
        XCTAssertEqual(plain.status, 1)
        XCTAssertTrue(plain.stderr.contains("plain may not create roles") && plain.stderr.contains("CREATEROLE"), plain.stderr)
    }
}
