import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios

/// Shared set-up for core tests: the project's sample data, signers, and body builders.
enum TestKit {
    static let repoRoot: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }()
    static let sample = SampleData(directory: repoRoot + "/sample-data")
    static let signer: JWSSigner = try! sample.signer()
    static let roots: TrustRoots = try! sample.trustRoots()
    static let fixtures = VerificationTests.fixtureDirectory.path

    /// 2026-06-01T00:00:00Z: the anchor scenario tests run at.
    static let anchor: Millis = 1_780_272_000_000
    static let day: Millis = 86_400_000
    /// Takes a store made now back to schema `version` (19 or later), as an earlier subdesk
    /// left it, so that opening it runs the later migrations again: each migration after
    /// `version` that made something is undone (26's catch-up columns and table, 25's app
    /// columns, 23's audit stamp, 22's refusal kinds; 20, 21 and 24 make nothing to undo),
    /// then the version is set. A new migration that makes something is undone here too.
    static func rollBack(_ store: Store, to version: Int) throws {
        precondition(version >= 19 && version < Migrations.latestVersion, "rollBack undoes migrations 20 to \(Migrations.latestVersion)")
        let sqlite = store.dialect == .sqlite
        if version < 45 { try store.db.execute(undoUnreadIndexes) }
        if version < 44 { try store.db.execute("DROP TABLE forward_owed") }
        if version < 43 && version >= 33 {
            try store.db.execute("DROP INDEX forward_outbox_state; CREATE INDEX forward_outbox_state ON forward_outbox(target, state, last_attempt_ms)")
        }
        if version < 42 { try store.db.execute("DROP INDEX transactions_product_group") }
        if version < 41 && version >= 35 {
            try store.db.execute(["page", "selection_type", "save_type"].map { "ALTER TABLE retention_messaging DROP COLUMN \($0);" }
                .joined(separator: " "))
        }
        if version < 40 && version >= 33 {
            try store.db.execute("DROP INDEX forward_outbox_give_up; ALTER TABLE forward_outbox DROP COLUMN round_start")
        }
        if version < 39 {
            try store.db.execute("ALTER TABLE notifications DROP COLUMN auto_renew; ALTER TABLE notifications DROP COLUMN auto_renew_product_id")
        }
        if version < 38 { try store.db.execute("DROP TABLE retention_decisions") }
        // Migration 37's audit stamp allows the console's actions more, and is left.
        if version < 37 { try store.db.execute("DROP TABLE retention_content") }
        // Migration 35's audit stamp allows one action more (retention_report_import), and is left.
        if version < 35 { try store.db.execute("DROP TABLE retention_messaging") }
        if version < 33 { try store.db.execute("DROP TABLE forward_attempts; DROP TABLE forward_outbox") }
        if version < 31 && !sqlite {
            // Migration 31's function; the audit stamp's body it replaced differs only in the
            // clause for that function's entries, and is left.
            try store.db.execute("DROP FUNCTION \(LockHolderEnding.function)(INTEGER)")
        }
        if version < 30 { try store.db.execute("ALTER TABLE notifications DROP COLUMN grace_expires_ms") }
        if version < 29 && !sqlite { try store.db.execute("DROP INDEX metric_segments_app") }
        if version < 28 && !sqlite { try store.db.execute("DROP INDEX metric_segments_read") }
        if version < 27 { try store.db.execute(undoAppIntakeCounts(store.dialect)) }
        if version < 26 { try store.db.execute(undoSegmentCatchUp) }
        if version < 25 { try store.db.execute(undoAppColumns(sqlite: sqlite)) }
        if version < 23 && !sqlite {
            try store.db.execute("DROP TRIGGER \(AuditStamp.stamp) ON audit_log; DROP FUNCTION \(AuditStamp.stamp)()")
        }
        if version < 22 {
            try store.db.execute("ALTER TABLE quarantine DROP COLUMN reason_kind; ALTER TABLE intake_log DROP COLUMN reason_kind")
        }
        try store.db.run(sqlite ? "PRAGMA user_version = \(version)" : "UPDATE schema_version SET version = \(version)")
    }

    /// Takes migration 27 (intake counted per app) back off a store: the counts keyed as
    /// migration 18 made them, each app's summed.
    private static func undoAppIntakeCounts(_ d: SQLDialect) -> String {
        """
        CREATE TABLE intake_counts_27 AS SELECT environment, type, outcome, reason, sum(count) AS count, max(last_ms) AS last_ms
            FROM intake_counts GROUP BY environment, type, outcome, reason;
        DROP TABLE intake_counts;
        \(Migrations.intakeCountsTable(dialect: d, byApp: false))
        INSERT INTO intake_counts SELECT environment, type, outcome, reason, count, last_ms FROM intake_counts_27;
        DROP TABLE intake_counts_27;
        """
    }

    /// Takes migration 26 (the by-segment catch-up's columns and table) back off a store.
    private static let undoSegmentCatchUp = """
        DROP TABLE metric_segments_catchup;
        ALTER TABLE metric_segments_pending DROP COLUMN taken;
        ALTER TABLE metric_segments_pending DROP COLUMN claimed;
        """

    static var policy: IntakePolicy { SampleData.demoPolicy }

    /// Drops the tables and columns of migrations 33 and later, for a test that takes a SQLite
    /// store back by hand to a version before them (opening it makes them again).
    static let undoLaterTables = """
        DROP TABLE forward_attempts; DROP TABLE forward_outbox; DROP TABLE retention_messaging;
        DROP TABLE retention_content; DROP TABLE retention_decisions;
        ALTER TABLE notifications DROP COLUMN auto_renew; ALTER TABLE notifications DROP COLUMN auto_renew_product_id;
        DROP INDEX transactions_product_group; DROP TABLE forward_owed;
        \(undoUnreadIndexes)
        """

    /// Undoes migration 45: the three indexes no statement read.
    static let undoUnreadIndexes = """
        CREATE INDEX subscriptions_token ON subscriptions(app_account_token);
        CREATE INDEX transactions_purchase ON transactions(purchase_ms);
        CREATE INDEX notifications_signed ON notifications(signed_ms);
        """

    /// Undoes migration 25 (every record's app) on a store, for a test that takes a store
    /// back to an earlier version: `tables` are those of its columns' tables the store still has.
    static func undoAppColumns(sqlite: Bool = true,
                               tables: [String] = ["subscriptions", "notifications", "quarantine", "refund_requests", "backfill_runs"]) -> String {
        // SQLite drops no column a trigger names: migration 25 makes the trigger again.
        (sqlite ? "DROP TRIGGER IF EXISTS refund_request_open;\n" : "") + """
        DROP INDEX subscriptions_app_status_page; DROP INDEX subscriptions_app_expires; DROP INDEX subscriptions_app_last_event;
        DROP INDEX notifications_app_received;

        """ + tables.map { "ALTER TABLE \($0) DROP COLUMN bundle_id;" }.joined(separator: "\n")
    }

    static func intake(_ store: Store, policy: IntakePolicy = TestKit.policy, rules: DerivationRules = .current) -> Intake {
        Intake(store: store, verifier: SignedDataVerifier(roots: roots), policy: policy, rules: rules)
    }

    static func json(_ object: [String: Any]) -> Data {
        try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    static func transaction(id: String = "2000000900000001", original: String = "2000000900000001",
                            product: String = "app.monthly", purchase: Millis = anchor - 10 * day,
                            expires: Millis? = anchor + 20 * day, signed: Millis = anchor - 10 * day,
                            environment: String = "Production", bundleId: String = ScenarioBuilder.demoBundleId,
                            extra: [String: Any] = [:]) -> [String: Any] {
        var t: [String: Any] = [
            "transactionId": id, "originalTransactionId": original, "productId": product, "bundleId": bundleId,
            "purchaseDate": purchase, "originalPurchaseDate": purchase, "signedDate": signed,
            "environment": environment, "inAppOwnershipType": "PURCHASED", "type": "Auto-Renewable Subscription",
            "price": 9990, "currency": "USD", "transactionReason": "PURCHASE",
        ]
        if let expires { t["expiresDate"] = expires }
        for (k, v) in extra { t[k] = v }
        return t
    }

    static func renewal(original: String = "2000000900000001", product: String = "app.monthly",
                        signed: Millis = anchor - 10 * day, environment: String = "Production",
                        extra: [String: Any] = [:]) -> [String: Any] {
        var r: [String: Any] = ["originalTransactionId": original, "productId": product, "autoRenewProductId": product,
                                "autoRenewStatus": 1, "signedDate": signed, "environment": environment]
        for (k, v) in extra { r[k] = v }
        return r
    }

    /// A V2 notification body signed by `signer` (the test CA unless given).
    static func body(type: String, subtype: String? = nil, uuid: String = UUID().uuidString.lowercased(),
                     signed: Millis = anchor - 10 * day, environment: String = "Production",
                     bundleId: String = ScenarioBuilder.demoBundleId, appAppleId: Int64? = ScenarioBuilder.demoAppAppleId,
                     transaction: [String: Any]? = transaction(), renewal: [String: Any]? = renewal(),
                     signer: JWSSigner = TestKit.signer, nestedSigner: JWSSigner? = nil,
                     extraPayload: [String: Any] = [:], extraData: [String: Any] = [:]) -> Data {
        var data: [String: Any] = ["bundleId": bundleId, "environment": environment, "bundleVersion": "1.0"]
        for (k, v) in extraData { data[k] = v }
        if let appAppleId { data["appAppleId"] = appAppleId }
        if let transaction { data["signedTransactionInfo"] = try! (nestedSigner ?? signer).sign(payload: json(transaction)) }
        if let renewal { data["signedRenewalInfo"] = try! (nestedSigner ?? signer).sign(payload: json(renewal)) }
        var payload: [String: Any] = ["notificationType": type, "notificationUUID": uuid, "version": "2.0",
                                      "signedDate": signed, "data": data]
        if let subtype { payload["subtype"] = subtype }
        for (k, v) in extraPayload { payload[k] = v }
        return json(["signedPayload": try! signer.sign(payload: json(payload))])
    }

    static func fixtureSigner(leaf: String, intermediate: String, root: String = "test-ca/root.der",
                              key: String = "test-ca/leaf-key.pem") -> JWSSigner {
        try! JWSSigner(privateKeyPEM: VerificationTests.fixture(key),
                       chain: [VerificationTests.fixture(leaf), VerificationTests.fixture(intermediate), VerificationTests.fixture(root)])
    }

    static func state(_ store: Store, _ otid: String, now: Millis = anchor) throws -> SubscriptionState? {
        let h = try store.subscriptions.history(originalTransactionId: otid)
        return StateDerivation.derive(originalTransactionId: otid, transactions: h.transactions, renewal: h.renewal,
                                      events: h.events, now: now)
    }
}

extension Store {
    /// Runs raw SQL, for tests proving the store refuses a change (the audit log's guards).
    func executeForTesting(_ sql: String) throws { try db.execute(sql) }
    /// The first column of the first row of `sql`, as an integer.
    func firstIntForTesting(_ sql: String) throws -> Int? { try db.first(sql, []) { $0.int(0) } }
    /// What the owner's lock-holder function says of `pid`: the login it ended, or nil.
    func endOverdueWriteLockHoldersForTesting(pid: Int) throws -> String? {
        try db.first("SELECT \(LockHolderEnding.function)(?)", [pid]) { $0.optionalString(0) } ?? nil
    }
}

extension XCTestCase {
    /// A fresh SQLite file's path in the temporary folder, removed (with its -wal and -shm)
    /// when the test ends.
    func scratchStoreFile(_ prefix: String) -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString).db").path
        addTeardownBlock {
            for made in [path, path + "-wal", path + "-shm", path + "-journal"] { try? FileManager.default.removeItem(atPath: made) }
        }
        return path
    }
}
