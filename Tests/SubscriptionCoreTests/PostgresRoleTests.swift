import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// What only a PostgreSQL store has: database roles, and an audit log whose operator the
/// server records. Runs when SUBDESK_TEST_POSTGRES names a server (`scripts/pg-cluster`).
final class PostgresRoleTests: XCTestCase, RunsOnEveryEngine {
    var base: String!
    var location: String!
    var owner: Store!
    var suffix: String!

    override func setUpWithError() throws {
        let base = try TestEngine.requirePostgres()
        self.base = base
        location = Store.freshPostgresLocation(base)
        owner = try Store(path: location)
        try owner.server.installRoles()
        suffix = String(UUID().uuidString.prefix(8)).lowercased()
    }

    /// A store opened as a new login user who is a member of `role`.
    func open(as role: String, mode: Store.OpenMode = .existing) throws -> (store: Store, user: String) {
        let user = "\(role.replacingOccurrences(of: "subdesk_", with: ""))_\(suffix!)"
        try owner.executeForTesting("CREATE ROLE \(user) LOGIN IN ROLE \(role)")
        var parts = try XCTUnwrap(URLComponents(string: location))
        parts.user = user
        return (try Store(path: try XCTUnwrap(parts.string), mode: mode), user)
    }

    func notification(_ uuid: String, id: String) -> Data {
        TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: uuid,
                     transaction: TestKit.transaction(id: id, original: id), renewal: TestKit.renewal(original: id))
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

    func testEachRoleCanDoWhatItShouldAndNothingMore() throws {
        // Something to look at, written by the owner.
        guard case .stored = try TestKit.intake(owner).ingest(notification(UUID().uuidString.lowercased(), id: "2000000955500001")) else {
            return XCTFail("the owner could not ingest")
        }
        let now = DateText.nowMillis()

        // Read-only: looks everything up, writes nothing.
        let reader = try open(as: "subdesk_read", mode: .reading).store
        XCTAssertTrue(reader.opening.readOnly)
        XCTAssertNotNil(try reader.subscriptions.find(originalTransactionId: "2000000955500001"))
        XCTAssertEqual(try reader.notifications.count(), 1)
        assertRefused("ingest as read") { _ = try TestKit.intake(reader).ingest(self.notification(UUID().uuidString.lowercased(), id: "2000000955500002")) }
        assertRefused("override as read") { _ = try Operations(store: reader, operatorName: "x").grant("2000000955500001", until: now + 86_400_000, reason: "r") }

        // Intake: adds notifications and derives state; no overrides, no audit entries,
        // and a stored notification is never changed or deleted.
        let intake = try open(as: "subdesk_intake").store
        guard case .stored = try TestKit.intake(intake).ingest(notification(UUID().uuidString.lowercased(), id: "2000000955500003")) else {
            return XCTFail("intake could not ingest")
        }
        XCTAssertNotNil(try owner.subscriptions.find(originalTransactionId: "2000000955500003"))
        assertRefused("override as intake") { _ = try Operations(store: intake, operatorName: "x").grant("2000000955500003", until: now + 86_400_000, reason: "r") }
        assertRefused("update a notification as intake") { try intake.executeForTesting("UPDATE notifications SET type = 'REFUND'") }
        assertRefused("delete a notification as intake") { try intake.executeForTesting("DELETE FROM notifications") }
        assertRefused("purge quarantine as intake") { _ = try Operations(store: intake, operatorName: "x").purgeQuarantine(before: now, reason: "r") }
        // With a [forward] target intake owes what it stores, and as serve's deliverers do
        // spreads it into the outbox (a locking read: UPDATE on forward_owed) and claims it.
        let relaying = TestKit.intake(intake)
        relaying.forwarding = ForwardTargets([ForwardTarget(name: "backend", url: URL(string: "https://backend.example.com/in")!, secretFile: "/s")])
        guard case .stored = try relaying.ingest(notification(UUID().uuidString.lowercased(), id: "2000000955500005")) else {
            return XCTFail("intake could not ingest with a forward target")
        }
        XCTAssertEqual(try intake.outbox.spread(), 1)
        XCTAssertEqual(try intake.outbox.claim(target: "backend", now: now + 3_600_000, limit: 10, lease: 60_000, claimant: "t").count, 1)

        // Support: overrides (audited), but no notifications and no purges.
        let (support, supportUser) = try open(as: "subdesk_support")
        let placed = try Operations(store: support, operatorName: "somebody-else").grant("2000000955500001", until: now + 86_400_000, reason: "goodwill")
        XCTAssertEqual(try owner.overrides.find(id: placed.id)?.kind, .grant)
        assertRefused("ingest as support") { _ = try TestKit.intake(support).ingest(self.notification(UUID().uuidString.lowercased(), id: "2000000955500004")) }
        assertRefused("purge quarantine as support") { _ = try Operations(store: support, operatorName: "x").purgeQuarantine(before: now, reason: "r") }
        // Support does not deliver: with something owed, the spread's locking read is refused,
        // and said to need UPDATE.
        guard case .stored = try relaying.ingest(notification(UUID().uuidString.lowercased(), id: "2000000955500006")) else {
            return XCTFail("intake could not ingest with a forward target")
        }
        XCTAssertThrowsError(try support.outbox.spread()) { XCTAssertTrue("\($0)".contains("may not UPDATE on forward_owed"), "\($0)") }

        // Operator: purges the quarantine, audited.
        let (op, operatorUser) = try open(as: "subdesk_operator")
        _ = try Operations(store: op, operatorName: "x").purgeQuarantine(before: now, reason: "spring cleaning")

        // The audit log names the database users, whatever name the client gave.
        let entries = try owner.audit.entries()
        XCTAssertEqual(entries.map(\.operatorName), [supportUser, operatorUser])
        XCTAssertEqual(entries.map(\.action), ["override_grant", "quarantine_purge"])
    }

    /// A store deployed at schema 26 with its roles installed, then migrated by its owner
    /// (`subdesk migrate`, or any command that opens it): migration 27 makes the intake
    /// counters' table again, and grants each role its rights on it, so an intake login goes
    /// on counting and a read login on reading without `db init --roles` run again.
    func testAnIntakeLoginCountsAndAReaderReadsTheCountsAfterMigration27() throws {
        // The roles installed on a store of 26 (which lacks the tables later migrations made,
        // granted only where present); migration 27 grants the counters' table it makes.
        try TestKit.rollBack(owner, to: 26)
        try owner.server.installRoles()
        owner = nil
        owner = try Store(path: location)
        XCTAssertEqual(owner.schemaVersion, Migrations.latestVersion)
        let intake = try open(as: "subdesk_intake").store
        guard case .stored = try TestKit.intake(intake).ingest(notification(UUID().uuidString.lowercased(), id: "2000000955500027")) else {
            return XCTFail("intake could not ingest")
        }
        let counted = try OnCallReading.read(from: open(as: "subdesk_read", mode: .reading).store, now: DateText.nowMillis()).intakeCounts
        XCTAssertEqual(counted.map(\.bundleId), [ScenarioBuilder.demoBundleId], "counted under the app it was signed for")
        XCTAssertEqual(counted.map(\.count), [1])
    }

    /// The function intake calls to end a session holding the writers' lock ends no other:
    /// not the owner's, not an intake login's, not a support login's within its bound (nor
    /// one whose owner was never granted its privileges), not a session of a login of no
    /// subdesk role, not one that holds nothing; only a support or operator session past its
    /// login's bound. Only intake (and the owner) may call it (the rights table's routines).
    func testTheLockHolderFunctionEndsOnlyASupportOrOperatorSessionPastItsBound() throws {
        let (intake, intakeUser) = try open(as: "subdesk_intake")
        func again(_ user: String) throws -> Store {
            var parts = try XCTUnwrap(URLComponents(string: location))
            parts.user = user
            return try Store(path: try XCTUnwrap(parts.string))
        }
        func end(_ pid: Int) throws -> String? { try intake.endOverdueWriteLockHoldersForTesting(pid: pid) }
        func hold(_ store: Store) throws -> Int {
            let pid = try XCTUnwrap(try store.firstIntForTesting("SELECT pg_backend_pid()"))
            try store.executeForTesting("BEGIN; LOCK TABLE store_changes IN ROW EXCLUSIVE MODE")
            return pid
        }
        // The owner, and an intake login, holding it for as long as they like.
        let ownersOwn = try Store(path: location)
        let ownerPid = try hold(ownersOwn)
        Thread.sleep(forTimeInterval: 1.2)
        XCTAssertNil(try end(ownerPid))
        try ownersOwn.executeForTesting("ROLLBACK")
        let other = try again(intakeUser)
        let intakePid = try hold(other)
        XCTAssertNil(try end(intakePid))
        try other.executeForTesting("ROLLBACK")
        // A session that holds nothing, and pids that are no session.
        XCTAssertNil(try end(intakePid))
        XCTAssertNil(try end(0))
        // A support login with an idle bound of 1 s: within it, not ended; past it, ended.
        let name = "sitter_\(suffix!)"
        var bounds = try XCTUnwrap(PostgresLogin.defaults(name: name, role: "support"))
        bounds.idleInTransactionMs = 1_000
        XCTAssertTrue(try owner.server.makeLogin(bounds))
        let sitter = try again(name)
        try sitter.executeForTesting("SET idle_in_transaction_session_timeout = 0")
        let sitterPid = try hold(sitter)
        XCTAssertNil(try end(sitterPid), "within its bound")
        // A support login the owner holds no privileges of (made by hand, not by db login).
        let (handMade, handMadeUser) = try open(as: "subdesk_support")
        try handMade.executeForTesting("SET idle_in_transaction_session_timeout = 0")
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(try end(sitterPid), name, "past its bound of 1 s")
        XCTAssertThrowsError(try sitter.executeForTesting("SELECT 1"), "ended")
        // (Only where the owner is no superuser, as `db init` wants it: a superuser may
        // signal any session.)
        if try owner.firstIntForTesting("SELECT CASE WHEN rolsuper THEN 1 ELSE 0 END FROM pg_roles WHERE rolname = current_user") == 0 {
            let handPid = try hold(handMade)
            Thread.sleep(forTimeInterval: 5.5)
            XCTAssertNil(try end(handPid), "the owner may not signal it: left alone (doctor names it)")
            try handMade.executeForTesting("ROLLBACK")
        }
        XCTAssertEqual(try owner.audit.entries().filter { $0.kind == .lockHolderEnded }.map(\.target), [name])
        // Nobody else may call it.
        let support = try again(handMadeUser)
        assertRefused("end a lock holder as support") { _ = try support.endOverdueWriteLockHoldersForTesting(pid: 0) }
    }

    /// A view named audit_log where the search path finds it first (here a session's
    /// temporary one) is what every read of the log would read: a problem doctor names.
    func testARelationNamedLikeTheAuditLogEarlierInTheSearchPathIsNamed() throws {
        XCTAssertEqual(try owner.upkeep.auditGuardProblems(), [])
        try owner.executeForTesting("CREATE TEMP VIEW audit_log AS SELECT * FROM audit_log WHERE false")
        let problems = try owner.upkeep.auditGuardProblems()
        XCTAssertTrue(problems.contains { $0.hasPrefix("a view named audit_log in pg_temp") && $0.contains("comes before the store's") },
                      "\(problems)")
    }

    /// A store deployed at schema 29 with its roles installed, migrated by its owner:
    /// migration 30 adds each notification's grace end to the notifications table, so an
    /// intake login keeps it with what it adds (its INSERT on the table) and still cannot
    /// change it afterwards; the fill that wrote the older rows' graces was the owner's.
    func testAnIntakeLoginKeepsAGracesEndAfterMigration30AndCannotChangeIt() throws {
        try TestKit.rollBack(owner, to: 29)
        owner = nil
        owner = try Store(path: location)
        XCTAssertEqual(owner.schemaVersion, Migrations.latestVersion)
        let intake = try open(as: "subdesk_intake").store
        let id = "2000000955500030", graceEnds: Millis = 1_790_000_000_000
        let body = TestKit.body(type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", uuid: UUID().uuidString.lowercased(),
                                transaction: TestKit.transaction(id: id, original: id),
                                renewal: TestKit.renewal(original: id, extra: ["isInBillingRetryPeriod": true,
                                                                               "gracePeriodExpiresDate": graceEnds]))
        guard case .stored = try TestKit.intake(intake).ingest(body) else { return XCTFail("intake could not ingest") }
        XCTAssertEqual(try owner.subscriptions.history(originalTransactionId: id).events.map(\.graceExpires), [graceEnds])
        assertRefused("change a kept grace as intake") {
            try intake.executeForTesting("UPDATE notifications SET grace_expires_ms = 0")
        }
    }

    /// A store deployed at schema 25 with its roles installed: migration 26 made the
    /// by-segment catch-up's table, which migration 27 grants too, so after `migrate` an
    /// intake login catches the aggregates up and a read login counts by segment.
    func testAStoreDeployedAtSchema25CountsBySegmentAsItsLoginsAfterMigrating() throws {
        // The roles were installed (setUp); taking the store back drops migration 26's
        // table, which migrating again makes without grants.
        try TestKit.rollBack(owner, to: 25)
        owner = nil
        owner = try Store(path: location)
        let intake = try open(as: "subdesk_intake").store
        guard case .stored = try TestKit.intake(intake).ingest(notification(UUID().uuidString.lowercased(), id: "2000000955500025")) else {
            return XCTFail("intake could not ingest")
        }
        let reader = try open(as: "subdesk_read", mode: .reading).store
        XCTAssertEqual(try reader.metrics.segmentValues(.product), ["app.monthly"], "the reader sums what is pending")
        try intake.metrics.catchUpSegments()
        XCTAssertEqual(try owner.metrics.pendingSegmentCount(), 0)
        XCTAssertEqual(try reader.metrics.segmentValues(.product), ["app.monthly"])
    }

    /// A store deployed at schema 34 with its roles installed: migration 35 makes the retention
    /// messaging report's table and grants its rights, so after `migrate` an operator login
    /// imports a report (audited under its own name), support and read logins are refused
    /// it, and a read login reads the figures.
    func testOnlyAnOperatorImportsTheRetentionReportAfterMigration35() throws {
        try TestKit.rollBack(owner, to: 34)
        owner = nil
        owner = try Store(path: location)
        XCTAssertEqual(owner.schemaVersion, Migrations.latestVersion)
        let report = Data(RetentionReportFixture.text.utf8)
        let reader = try open(as: "subdesk_read", mode: .reading).store
        let support = try open(as: "subdesk_support").store
        assertRefused("import as read") { _ = try Operations(store: reader, operatorName: "x").importRetentionReport(report, file: "r.txt") }
        assertRefused("import as support") { _ = try Operations(store: support, operatorName: "x").importRetentionReport(report, file: "r.txt") }
        XCTAssertEqual(try reader.retention.report.rows().count, 0, "nothing of a refused import is stored")
        XCTAssertEqual(StoreWrite.retentionImport.table, "retention_messaging")
        XCTAssertEqual(PostgresRoles.allows("subdesk_support", StoreWrite.retentionImport.privilege, on: "retention_messaging"), false)

        let (op, operatorUser) = try open(as: "subdesk_operator")
        _ = try Operations(store: op, operatorName: "x").importRetentionReport(report, file: "r.txt")
        _ = try Operations(store: op, operatorName: "x").importRetentionReport(report, file: "r.txt")
        XCTAssertEqual(RetentionReport(rows: try reader.retention.report.rows(), grouping: .product).total.views, 330)
        let entries = try owner.audit.entries().filter { $0.kind == .retentionReportImport }
        XCTAssertEqual(entries.map(\.operatorName), [operatorUser, operatorUser])
    }

    func testTheAuditLogRefusesUpdateAndDeleteForEveryRoleAndTheOwner() throws {
        _ = try Operations(store: owner, operatorName: "x").grant(try seed(), until: DateText.nowMillis() + 86_400_000, reason: "goodwill")
        var stores: [(String, Store)] = [("owner", owner)]
        for role in PostgresRoles.all {
            stores.append((role, try open(as: role, mode: role == "subdesk_read" ? .reading : .existing).store))
        }
        for (who, store) in stores {
            for statement in ["UPDATE audit_log SET reason = 'changed'", "DELETE FROM audit_log", "TRUNCATE audit_log"] {
                do {
                    try store.executeForTesting(statement)
                    XCTFail("\(who): \(statement) was allowed")
                } catch let e as StoreError {
                    // The owner meets the triggers; the roles meet their missing privileges first.
                    XCTAssertTrue(e.message.contains("append-only") || e.sqlState == "42501", "\(who): \(statement): \(e)")
                }
            }
        }
        XCTAssertEqual(try owner.audit.entries().map(\.reason), ["goodwill"])
    }

    enum Attempt: Equatable { case allowed, denied, guarded }

    /// Runs `sql` in a transaction that is rolled back: denied when the server refuses the
    /// privilege (42501), guarded when the audit log's triggers refuse it, allowed otherwise
    /// (a constraint that fails on the empty row still means the privilege was there).
    func attempt(_ store: Store, _ sql: String) throws -> Attempt {
        try store.executeForTesting("BEGIN")
        defer { try? store.executeForTesting("ROLLBACK") }
        do {
            try store.executeForTesting(sql)
            return .allowed
        } catch let e as StoreError {
            if e.sqlState == "42501" { return .denied }
            if e.message.contains("append-only") { return .guarded }
            return .allowed
        }
    }

    /// The role matrix: every role, the owner and a login with no subdesk grant, against
    /// every table of the schema and every column of it for UPDATE, tried for real; what the
    /// server allows is exactly what `PostgresRoles.rights` (and with it the README) says.
    func testEveryRoleMayDoExactlyWhatTheRightsTableSays() throws {
        _ = try Operations(store: owner, operatorName: "x").grant(try seed(), until: DateText.nowMillis() + 86_400_000, reason: "goodwill")
        let schemaTables = try owner.columnsForTesting()
        XCTAssertEqual(Set(schemaTables.keys), Set(PostgresRoles.tables), "PostgresRoles.tables lists every table of the schema")

        var logins: [(who: String, store: Store)] = [("owner", owner)]
        for role in PostgresRoles.all { logins.append((role, try open(as: role).store)) }
        var mismatches: [String] = []
        for (who, store) in logins {
            for table in PostgresRoles.tables {
                func expect(_ privilege: PostgresRoles.Privilege, column: String? = nil, _ sql: String) throws {
                    var wanted: Attempt
                    if who == "owner" {
                        wanted = table == "audit_log" && [.update, .delete, .truncate].contains(privilege) ? .guarded : .allowed
                    } else {
                        wanted = PostgresRoles.allows(who, privilege, on: table, column: column) ? .allowed : .denied
                    }
                    let got = try attempt(store, sql)
                    if got != wanted { mismatches.append("\(who) \(privilege.rawValue) \(table)\(column.map { ".\($0)" } ?? ""): \(got), wanted \(wanted)") }
                }
                // The audit log holds a row, so its row triggers meet something to refuse.
                let rows = table == "audit_log" ? "" : " WHERE false"
                try expect(.select, "SELECT 1 FROM \(table) LIMIT 0")
                try expect(.insert, "INSERT INTO \(table) DEFAULT VALUES")
                for column in schemaTables[table] ?? [] {
                    try expect(.update, column: column, "UPDATE \(table) SET \(column) = \(column)\(rows)")
                }
                try expect(.delete, "DELETE FROM \(table)\(rows)")
                try expect(.truncate, "TRUNCATE \(table)")
            }
            // Row locks need UPDATE somewhere in the table: a reader cannot hold a subscription.
            let wantsLock = who == "owner" || PostgresRoles.holds(who, .update, on: "subscriptions")
            let lock = try attempt(store, "SELECT 1 FROM subscriptions FOR UPDATE")
            if (lock == .allowed) != wantsLock { mismatches.append("\(who) row lock on subscriptions: \(lock)") }
            // A lock that stops intake's writes (stronger than ROW EXCLUSIVE) on any table but
            // the writers' own needs a table-wide UPDATE, DELETE or TRUNCATE: only the owner
            // and the roles that derive state hold one.
            for table in PostgresRoles.tables where table != "store_changes" {
                let held = try attempt(store, "LOCK TABLE \(table) IN SHARE ROW EXCLUSIVE MODE")
                let wanted = who == "owner" || [.update, .delete, .truncate].contains { PostgresRoles.allows(who, $0, on: table) }
                if (held == .allowed) != wanted { mismatches.append("\(who) table lock on \(table): \(held)") }
                if wanted && who != "owner" && !PostgresRoles.tableLockers.contains(who) {
                    mismatches.append("\(who) may lock \(table), and is no role that derives state")
                }
            }
            // The owner's functions: only the roles named may call them.
            for routine in PostgresRoles.routines {
                let called = try attempt(store, "SELECT \(routine.name)(0)")
                let wanted = who == "owner" || routine.roles.contains(who)
                if (called == .allowed) != wanted { mismatches.append("\(who) calls \(routine.name): \(called)") }
            }
            // Audit entries: each role writes only the actions its commands write (migration
            // 23's trigger, from PostgresRoles.auditActions), the owner any; an action no
            // command writes, nobody but the owner.
            for action in PostgresRoles.auditActions.flatMap(\.actions).map(\.rawValue) + ["made_up"] {
                let written = try attempt(store, """
                    INSERT INTO audit_log (at_ms, operator, action, outcome) VALUES (0, 'x', '\(action)', 'ok')
                    """)
                let wanted = who == "owner" || AuditAction(rawValue: action).map { PostgresRoles.auditWriters(of: $0).contains(who) } == true
                if (written == .allowed) != wanted { mismatches.append("\(who) audit action \(action): \(written)") }
            }
            // The writers' lock is the change counter's table: only a role that may update it
            // can hold it, so a reader cannot stall intake.
            for mode in ["EXCLUSIVE", "ROW EXCLUSIVE"] {
                let held = try attempt(store, "LOCK TABLE store_changes IN \(mode) MODE")
                let wanted = who == "owner" || PostgresRoles.allows(who, .update, on: "store_changes")
                if (held == .allowed) != wanted { mismatches.append("\(who) store lock (\(mode)): \(held)") }
            }
        }
        XCTAssertEqual(mismatches, [], mismatches.joined(separator: "\n"))

        // A login that is no member of any subdesk role reaches nothing in the store.
        let stranger = "stranger_\(suffix!)"
        try owner.executeForTesting("CREATE ROLE \(stranger) LOGIN")
        var parts = try XCTUnwrap(URLComponents(string: location))
        parts.user = stranger
        do {
            let store = try Store(path: try XCTUnwrap(parts.string), mode: .reading)
            for table in PostgresRoles.tables {
                XCTAssertEqual(try attempt(store, "SELECT 1 FROM \(table) LIMIT 0"), .denied, "stranger reads \(table)")
            }
        } catch is StoreNotFound {
            // Without USAGE on the schema the store's tables are not even visible.
        } catch let e as StoreError {
            XCTAssertEqual(e.sqlState.map { ["42501", "08001"].contains($0) }, true, "stranger: \(e)")
        }
    }

    /// An audit entry's time is the server's and its action must be one the writer's role
    /// writes: support cannot date a `consent_handled` in 1970, nor write a `sweep` (dated
    /// 2100, `failed 0`) that would become the last sweep on-call sees; an explicit id
    /// cannot put an entry after later ones. The owner's entries keep what it gave.
    func testAuditEntriesAreDatedByTheServerAndBoundToTheirWritersRoles() throws {
        func lastSweep() throws -> (at: Double?, failures: Double?) {
            let exposition = OnCallMetrics.exposition(OnCallInputs(reading: try OnCallReading.read(from: owner, now: DateText.nowMillis()),
                                                                   roots: [], quarantineBudgetBytes: nil))
            func value(_ name: String) -> Double? {
                exposition.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
            }
            return (value("subdesk_sweep_last_run_timestamp_seconds"), value("subdesk_sweep_last_failures"))
        }
        XCTAssertEqual(OnCallMetrics.all.first { $0.name == "subdesk_sweep_last_run_timestamp_seconds" }?.source.flatMap(\.writtenBy),
                       ["subdesk_operator"], "the last sweep is read from entries only an operator writes")
        // The owner's entry keeps its time.
        try owner.audit.append(AuditEntry(at: 1_000, operatorName: "x", action: .sweep, target: nil, reason: nil, outcome: "checked 1, failed 7"))
        XCTAssertEqual(try owner.audit.last(action: .sweep)?.at, 1_000)
        // An operator's sweep is dated by the server, whatever its client says.
        let (op, _) = try open(as: "subdesk_operator")
        let before = DateText.nowMillis()
        _ = try op.write { try op.audit.append(AuditEntry(at: 5_000, operatorName: "x", action: .sweep, target: nil, reason: nil, outcome: "checked 3, failed 2")) }
        let after = DateText.nowMillis()
        let swept = try XCTUnwrap(try owner.audit.last(action: .sweep))
        XCTAssertTrue((before - 1_000)...(after + 1_000) ~= swept.at, "an operator's entry is dated by the server: \(swept.at), not 5000")
        let seen = try lastSweep()
        XCTAssertEqual(seen.failures, 2)
        XCTAssertEqual(seen.at, Double(swept.at) / 1000)

        // Support may not write a sweep at all, however dated; the metrics do not move.
        let (support, supportUser) = try open(as: "subdesk_support")
        assertRefused("a sweep entry by support") {
            _ = try support.write {
                try support.audit.append(AuditEntry(at: 4_102_444_800_000, operatorName: "x", action: .sweep, target: nil, reason: nil,
                                                   outcome: "checked 9, failed 0"))
            }
        }
        assertRefused("a sweep entry by support, after every id") {
            try support.executeForTesting("""
                INSERT INTO audit_log (id, at_ms, operator, action, outcome) VALUES (9000000000000000000, 4102444800000, 'x', 'sweep', 'checked 9, failed 0')
                """)
        }
        XCTAssertEqual(try lastSweep().failures, 2)
        XCTAssertEqual(try lastSweep().at, Double(swept.at) / 1000)
        XCTAssertEqual(try owner.audit.entries().filter { $0.action == "sweep" }.count, 2)

        // What support may write is dated now, with an id of the log's own.
        let uuid = UUID().uuidString.lowercased()
        _ = try support.write {
            try support.audit.append(AuditEntry(at: 0, operatorName: "x", action: .consentHandled, target: uuid, reason: "forged",
                                               outcome: "handled"))
        }
        try support.executeForTesting("""
            INSERT INTO audit_log (id, at_ms, operator, action, target, outcome) VALUES (9000000000000000000, 0, 'x', 'consent_handled', '\(uuid)', 'handled')
            """)
        let handled = try owner.audit.entries(targets: [uuid])
        XCTAssertEqual(handled.count, 2)
        for entry in handled {
            XCTAssertGreaterThanOrEqual(entry.at, before - 1_000, "a consent_handled dated 1970 is dated when written")
            XCTAssertLessThan(entry.id, 9_000_000_000_000_000_000, "the id is the log's, not the client's")
        }

        // Entries support wrote before the trigger existed (made here with the triggers off)
        // are not read as facts: a sweep, and a failed revalidation, are an operator's.
        let failuresBefore = try OnCallReading.read(from: owner, now: DateText.nowMillis()).revalidationFailuresLastDay
        try owner.executeForTesting("ALTER TABLE audit_log DISABLE TRIGGER audit_log_stamp, DISABLE TRIGGER audit_log_operator")
        try owner.executeForTesting("""
            INSERT INTO audit_log (at_ms, operator, action, outcome) VALUES
                (\(DateText.nowMillis()), '\(supportUser)', 'sweep', 'checked 9, failed 0'),
                (\(DateText.nowMillis()), '\(supportUser)', 'revalidate', 'failed')
            """)
        try owner.executeForTesting("ALTER TABLE audit_log ENABLE TRIGGER audit_log_stamp, ENABLE TRIGGER audit_log_operator")
        XCTAssertEqual(try owner.audit.last(action: .sweep)?.operatorName, supportUser, "the forged entry is the newest")
        XCTAssertEqual(try lastSweep().failures, 2)
        XCTAssertEqual(try lastSweep().at, Double(swept.at) / 1000)
        XCTAssertEqual(try OnCallReading.read(from: owner, now: DateText.nowMillis()).revalidationFailuresLastDay, failuresBefore)
    }

    /// An owner's SECURITY DEFINER function that writes the audit log runs as the owner
    /// (current_user), but the entry is the caller's (session_user, its `operator`): it is
    /// dated by the server and checked against the caller's roles.
    func testAnOwnersSecurityDefinerFunctionDoesNotLetACallerWriteWhatItsRolesMayNot() throws {
        try owner.executeForTesting("""
            CREATE FUNCTION write_audit(a text, t bigint) RETURNS void LANGUAGE sql SECURITY DEFINER AS $$
                INSERT INTO audit_log (at_ms, operator, action, outcome) VALUES (t, 'x', a, 'checked 9, failed 0') $$
            """)
        let (support, _) = try open(as: "subdesk_support")
        try owner.executeForTesting("GRANT EXECUTE ON FUNCTION write_audit(text, bigint) TO subdesk_support")
        assertRefused("a sweep entry by support through the owner's function") {
            try support.executeForTesting("SELECT write_audit('sweep', 4102444800000)")
        }
        XCTAssertNil(try owner.audit.last(action: .sweep))
        let before = DateText.nowMillis()
        try support.executeForTesting("SELECT write_audit('\(AuditAction.consentHandled.rawValue)', 4102444800000)")
        let entry = try XCTUnwrap(try owner.audit.last(action: .consentHandled))
        XCTAssertTrue((before - 1_000)...(DateText.nowMillis() + 1_000) ~= entry.at, "dated by the server, not 2100: \(entry.at)")
    }

    /// Support places overrides and links users, but cannot rewrite what Apple's data derives.
    func testSupportCannotRewriteDerivedState() throws {
        let otid = try seed()
        let (support, _) = try open(as: "subdesk_support")
        for statement in ["UPDATE subscriptions SET status = 5", "UPDATE subscriptions SET expires_ms = 4102444800000",
                          "DELETE FROM transactions", "UPDATE renewal_info SET auto_renew = 0",
                          "INSERT INTO verified_chains (chain_hash, roots_hash, entry_lengths, subjects, valid_from_s, valid_until_s, checked_ms) VALUES ('\\x00', '\\x00', '1', 's', 0, 1, 0)"] {
            assertRefused("support: \(statement)") { try support.executeForTesting(statement) }
        }
        let ops = Operations(store: support, operatorName: "support")
        let placed = try ops.grant(otid, until: DateText.nowMillis() + 86_400_000, reason: "goodwill")
        _ = try ops.lift(overrideId: placed.id, reason: "done")
        _ = try ops.link(userId: "user-\(suffix!)", to: otid, force: false)
        XCTAssertEqual(try owner.subscriptions.find(originalTransactionId: otid)?.subscriber.userId, "user-\(suffix!)")
        XCTAssertEqual(try owner.audit.entries().map(\.action), ["override_grant", "override_lift", "link"])
    }

    /// A manager on the read role sees by-segment counts equal to the owner's, though only a
    /// writer may bring the aggregates up to date: the reader sums what is pending in memory.
    func testTheReadRoleCountsBySegmentAsTheOwnerDoes() throws {
        let builder = ScenarioBuilder(signer: TestKit.signer)
        let scenarios = try TestKit.sample.scenarios()
        for (index, scenario) in scenarios.enumerated() {
            for body in try builder.bodies(for: scenario, instance: index, anchor: TestKit.anchor) {
                _ = try TestKit.intake(owner).ingest(body, receivedAt: TestKit.anchor)
            }
        }
        try owner.metrics.catchUpSegments()
        // Intake goes on: these subscriptions are only noted pending for the aggregates.
        let intake = try open(as: "subdesk_intake").store
        for (index, scenario) in scenarios.enumerated() {
            for body in try builder.bodies(for: scenario, instance: 100 + index, anchor: TestKit.anchor) {
                _ = try TestKit.intake(intake).ingest(body, receivedAt: TestKit.anchor)
            }
        }
        XCTAssertGreaterThan(try owner.metrics.pendingSegmentCount(), 0)
        let reader = try open(as: "subdesk_read", mode: .reading).store
        XCTAssertTrue(reader.opening.readOnly)
        let utc = TimeZone(identifier: "UTC")!
        func report(_ store: Store, _ filter: SegmentFilter?) throws -> [DayCounts] {
            try DailyCountsReport.compute(store: store, from: DateText.format(TestKit.anchor - 90 * TestKit.day, "yyyy-MM-dd", zone: utc),
                                          to: DateText.format(TestKit.anchor + 10 * TestKit.day, "yyyy-MM-dd", zone: utc),
                                          timeZone: utc, segments: Set(CountSegment.allCases), filter: filter)
        }
        let products = try reader.metrics.segmentValues(.product)
        XCTAssertFalse(products.isEmpty)
        let readerParts = try products.map { try report(reader, SegmentFilter(dimension: .product, value: $0)) }
        let readerWhole = try report(reader, nil)
        XCTAssertGreaterThan(try owner.metrics.pendingSegmentCount(), 0, "the reader wrote nothing")
        let ownerParts = try products.map { try report(owner, SegmentFilter(dimension: .product, value: $0)) }
        XCTAssertEqual(try owner.metrics.pendingSegmentCount(), 0)
        XCTAssertEqual(try owner.metrics.segmentValues(.product), products)
        for (p, product) in products.enumerated() {
            for (i, day) in ownerParts[p].enumerated() {
                for m in Metric.all where !m.isRate {
                    XCTAssertEqual(readerParts[p][i][m], day[m], "\(product) \(m) on \(day.day)")
                }
            }
        }
        for (i, day) in readerWhole.enumerated() {
            for m in Metric.all where !m.isRate && !m.isMoney {
                XCTAssertEqual(readerParts.map { $0[i][m] }.reduce(0, +), day[m], "products add up: \(m) on \(day.day)")
            }
        }
    }

    private func seed() throws -> String {
        guard case .stored = try TestKit.intake(owner).ingest(notification(UUID().uuidString.lowercased(), id: "2000000955500009")) else {
            throw XCTSkip("seed not stored")
        }
        return "2000000955500009"
    }
}

extension Store {
    /// Every table of the store's schema with its columns, as the server lists them.
    func columnsForTesting() throws -> [String: [String]] {
        var tables: [String: [String]] = [:]
        for (table, column) in try db.rows("""
            SELECT table_name, column_name FROM information_schema.columns
            WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position
            """, [], { ($0.string(0), $0.string(1)) }) {
            tables[table, default: []].append(column)
        }
        return tables
    }
}
