import Foundation
import XCTest
@testable import SubscriptionCore

extension PostgresHardeningTests {
    /// Support takes the writers' lock (`store_changes`) for its writes by design; a support
    /// session left idle in its transaction holding it is named by doctor, and ended by the
    /// server within the bound `db login` gave the login, so intake, which waits longer,
    /// then stores its notification.
    func testASupportSessionIdleHoldingTheWritersLockIsEndedWithinItsBound() throws {
        try requirePostgres()
        let user = "helpdesk_\(suffix!)"
        let made = try run(["db", "login", user, "--role", "support", "--idle-timeout", "2s", "--db", location])
        XCTAssertEqual(made.status, 0, made.stderr)
        let (lines, _) = try bodies(1, firstInstance: 950_000)
        let holder = try connect(as: user, application: "left-open")
        let pid = try XCTUnwrap(holder.first("SELECT pg_backend_pid()") { $0.int(0) })
        try holder.execute("BEGIN; LOCK TABLE store_changes IN EXCLUSIVE MODE")
        let doctor = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        let line = try XCTUnwrap(doctor.stdout.split(separator: "\n").first { $0.contains("write lock") }, doctor.stdout)
        XCTAssertTrue(line.hasPrefix("WARN  write lock    held by database user \(user) (pid \(pid), application \"left-open\""), String(line))
        XCTAssertTrue(line.contains("EXCLUSIVE lock on store_changes"), String(line))

        // Intake waits up to 15 s; the server ends the idle session after 2 s.
        XCTAssertTrue(try cgi(location, lines[0], timeoutMs: 15_000).stdout.hasPrefix("Status: 200 OK"))
        XCTAssertThrowsError(try holder.execute("SELECT 1"), "the idle session was ended")
        holder.close()
        XCTAssertTrue(try run(["doctor", "--db", location] + ReliabilityTests.policyFlags).stdout.contains("OK    write lock    free"))
    }

    /// A support login made by `db login` (idle 5 s, statement 1 min) that sets its own
    /// timeouts to 0 and sits on the writers' lock: an intake login, its wait timed out, has
    /// the owner's function end it (its bound of 5 s has passed), audited by name, and stores
    /// its notification: within the bound plus 10 s.
    func testALoginThatLiftsItsOwnTimeoutsIsEndedByIntakePastItsBound() throws {
        try requirePostgres()
        let attacker = "sitter_\(suffix!)"
        XCTAssertEqual(try run(["db", "login", attacker, "--role", "support", "--db", location]).status, 0)
        let intake = try login("intake", in: "subdesk_intake")
        let (lines, _) = try bodies(1, firstInstance: 951_000)
        let holder = try connect(as: attacker, application: "sitter")
        try holder.execute("SET idle_in_transaction_session_timeout = 0; SET statement_timeout = 0; BEGIN; "
                           + "LOCK TABLE store_changes IN EXCLUSIVE MODE")
        let started = Date()
        let answered = try cgi(try uri(as: intake), lines[0], timeoutMs: 8_000)
        let first = answered.stdout.hasPrefix("Status: 200 OK") ? answered : try cgi(try uri(as: intake), lines[0], timeoutMs: 8_000)
        XCTAssertTrue(first.stdout.hasPrefix("Status: 200 OK"), first.stdout + first.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "within its bound (5 s) and 10 s")
        XCTAssertTrue(first.stderr.contains("ended the session of \(attacker)") || answered.stderr.contains("ended the session of \(attacker)"),
                      answered.stderr + first.stderr)
        XCTAssertThrowsError(try holder.execute("SELECT 1"), "the session was ended")
        holder.close()
        let audit = try engineQuery(location, "SELECT operator || ' ' || action || ' ' || target || ' ' || outcome FROM audit_log WHERE action = 'lock_holder_ended'")
        XCTAssertEqual(audit, "\(intake) lock_holder_ended \(attacker) ended")
    }

    /// A session that changed the change counter's row and left its transaction open holds
    /// no table lock a write would wait for, yet keeps every writer's commit waiting: doctor
    /// names it while it sits idle, and as the one a writer waits for.
    func testDoctorNamesASessionHoldingTheChangeCountersRow() throws {
        try requirePostgres()
        let holder = try connect(as: try login("rowkeeper", in: "subdesk_support"), application: "row-keeper")
        let pid = try XCTUnwrap(holder.first("SELECT pg_backend_pid()") { $0.int(0) })
        try holder.execute("BEGIN; UPDATE store_changes SET version = version WHERE id = 1")
        func doctorLine() throws -> String {
            let doctor = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
            return doctor.stdout.split(separator: "\n").first { $0.contains("write lock") }.map(String.init) ?? doctor.stdout
        }
        let idle = try doctorLine()
        XCTAssertTrue(idle.hasPrefix("WARN  write lock    held by database user rowkeeper_\(suffix!) (pid \(pid)"), idle)
        XCTAssertTrue(idle.contains("the writers' lock (store_changes), idle in its transaction"), idle)

        // A writer's commit (the counter's update) waits for that row, not for a table lock.
        let writer = try PostgresConnection(location: try PostgresLocation(location))
        let writerPid = try XCTUnwrap(writer.first("SELECT pg_backend_pid()") { $0.int(0) })
        try writer.execute("SET lock_timeout = 0")
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "writer").async {
            try? writer.execute("BEGIN; LOCK TABLE store_changes IN ROW EXCLUSIVE MODE; UPDATE store_changes SET version = version + 1 WHERE id = 1; COMMIT")
            done.signal()
        }
        var line = ""
        for _ in 0..<50 where !line.contains("a row writer pid \(writerPid) waits for") {
            usleep(100_000)
            line = try doctorLine()
        }
        XCTAssertTrue(line.hasPrefix("WARN  write lock    held by database user rowkeeper_\(suffix!) (pid \(pid)"), line)
        XCTAssertTrue(line.contains("a row writer pid \(writerPid) waits for"), line)
        try holder.execute("ROLLBACK")
        done.wait()
        holder.close()
        writer.close()
        XCTAssertTrue(try doctorLine().hasPrefix("OK    write lock    free"))
    }
}

extension PostgresHardeningTests {
    /// The trigger that dates audit entries and checks their actions is subdesk's own to
    /// doctor: in place it is no owner's addition, and its function replaced (so a role's
    /// entries keep the time it gave) or the trigger dropped is a FAIL naming it.
    func testDoctorKnowsTheAuditStampAndNamesItReplacedOrDropped() throws {
        try requirePostgres()
        let clean = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        XCTAssertTrue(clean.stdout.contains("OK    audit log     append-only (triggers in place), their functions unchanged"), clean.stdout)
        _ = try engineQuery(location, "CREATE OR REPLACE FUNCTION audit_log_stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$")
        let replaced = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        XCTAssertEqual(replaced.status, 1)
        XCTAssertTrue(replaced.stdout.contains("function audit_log_stamp() is not subdesk's: its body was replaced"), replaced.stdout)
        _ = try engineQuery(location, "DROP TRIGGER audit_log_stamp ON audit_log")
        let dropped = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        XCTAssertTrue(dropped.stdout.contains("trigger audit_log_stamp is missing"), dropped.stdout)
    }

    /// An audit function made SECURITY DEFINER, or given another search path, is no longer
    /// subdesk's, though its body is: doctor names each.
    func testDoctorNamesAnAuditFunctionMadeSecurityDefinerOrGivenOtherSettings() throws {
        try requirePostgres()
        _ = try engineQuery(location, "ALTER FUNCTION audit_log_stamp() SECURITY DEFINER")
        let definer = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        XCTAssertEqual(definer.status, 1)
        XCTAssertTrue(definer.stdout.contains("function audit_log_stamp() is SECURITY DEFINER"), definer.stdout)
        _ = try engineQuery(location, "ALTER FUNCTION audit_log_stamp() SECURITY INVOKER")
        _ = try engineQuery(location, "ALTER FUNCTION audit_log_stamp() SET search_path = x, pg_catalog")
        _ = try engineQuery(location, "ALTER FUNCTION audit_log_operator() SET search_path = x, pg_catalog")
        let configured = try run(["doctor", "--db", location] + ReliabilityTests.policyFlags)
        XCTAssertEqual(configured.status, 1)
        XCTAssertTrue(configured.stdout.contains("function audit_log_stamp() has settings search_path=x, pg_catalog, not subdesk's search_path=pg_catalog, pg_temp"),
                      configured.stdout)
        XCTAssertTrue(configured.stdout.contains("function audit_log_operator() has settings search_path=x, pg_catalog, not subdesk's none"),
                      configured.stdout)
        XCTAssertFalse(configured.stdout.contains("SECURITY DEFINER"), configured.stdout)
    }
}
