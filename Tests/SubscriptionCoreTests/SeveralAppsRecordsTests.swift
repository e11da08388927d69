import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskScenarios
import SubdeskTestKit

/// Every record knows its app: subscriptions, notifications, purchases, consent
/// withdrawals, refund requests, quarantined bodies and backfill runs carry the bundle id
/// they were signed for, written by intake and taken by migration 25 from what a store of
/// an earlier subdesk holds. Runs on both engines (SUBDESK_TEST_POSTGRES).
final class SeveralAppsRecordsTests: XCTestCase, RunsOnEveryEngine {
    let apps = SeveralAppsTests.self
    static let fitness = SeveralAppsTests.fitness
    static let recipes = SeveralAppsTests.recipes

    func column(_ store: Store, _ sql: String, _ key: String) throws -> String? {
        try store.db.first(sql, [key]) { $0.optionalString(0) } ?? nil
    }

    func testEveryRecordCarriesTheBundleIdItWasSignedFor() throws {
        let store = try Store.inMemory()
        let intake = try apps.twoAppIntake(store)
        for (bundle, appleId, otid, uuid) in [(Self.fitness, Int64(1234567890), "7100000000000001", "fit-1"),
                                              (Self.recipes, Int64(2234567890), "7200000000000001", "rec-1")] {
            guard case .stored = try intake.ingest(apps.body(app: bundle, appleId: appleId, otid: otid, uuid: uuid)) else {
                return XCTFail("\(uuid) is stored")
            }
        }
        // A one-time purchase of recipes, and a consumption request about it.
        let purchase = TestKit.transaction(id: "7200000000000050", original: "7200000000000050", product: "recipes.pack",
                                           expires: nil, bundleId: Self.recipes, extra: ["type": "Consumable"])
        guard case .stored = try intake.ingest(TestKit.body(type: "ONE_TIME_CHARGE", uuid: "rec-2", bundleId: Self.recipes,
                                                            appAppleId: 2234567890, transaction: purchase, renewal: nil)),
              case .stored = try intake.ingest(TestKit.body(type: "CONSUMPTION_REQUEST", uuid: "rec-3", bundleId: Self.recipes,
                                                            appAppleId: 2234567890, transaction: purchase, renewal: nil,
                                                            extraData: ["consumptionRequestReason": "UNINTENDED_PURCHASE"])) else {
            return XCTFail("the purchase and its consumption request are stored")
        }
        XCTAssertEqual(try store.subscriptions.find(originalTransactionId: "7100000000000001")?.state.bundleId, Self.fitness)
        XCTAssertEqual(try store.subscriptions.find(originalTransactionId: "7200000000000001")?.state.bundleId, Self.recipes)
        for (uuid, bundle) in [("fit-1", Self.fitness), ("rec-1", Self.recipes), ("rec-2", Self.recipes), ("rec-3", Self.recipes)] {
            XCTAssertEqual(try column(store, "SELECT bundle_id FROM notifications WHERE notification_uuid = ?", uuid), bundle, uuid)
        }
        XCTAssertEqual(try store.transactions.purchases(id: "7200000000000050").map(\.bundleId), [Self.recipes])
        XCTAssertEqual(try column(store, "SELECT bundle_id FROM refund_requests WHERE notification_uuid = ?", "rec-3"), Self.recipes)

        // A body for a third app is quarantined under the bundle id it names; junk under none.
        guard case .rejected(_, let other) = try intake.ingest(apps.body(app: "com.example.other", appleId: 3234567890,
                                                                         otid: "7300000000000001", uuid: "oth-1")),
              case .rejected(_, let junk) = try intake.ingest(Data("{\"signedPayload\": \"x.y.z\"}".utf8)) else {
            return XCTFail("both are refused")
        }
        let quarantined = "SELECT bundle_id FROM quarantine WHERE id = CAST(? AS \(store.db.dialect == .postgres ? "BIGINT" : "INTEGER"))"
        XCTAssertEqual(try column(store, quarantined, String(other)), "com.example.other")
        XCTAssertNil(try column(store, quarantined, String(junk)))
        // Read one app at a time: its quarantined bodies and its refund requests.
        let recipes = AppScope(bundleId: Self.recipes, includesUnknown: false)
        let fitness = AppScope(bundleId: Self.fitness, includesUnknown: false)
        XCTAssertEqual(try store.quarantine.entries(app: AppScope(bundleId: "com.example.other", includesUnknown: false)).map(\.id), [other])
        XCTAssertEqual(try store.quarantine.entries(app: recipes).map(\.id), [])
        XCTAssertEqual(try store.quarantine.entries(app: AppScope(bundleId: Self.recipes, includesUnknown: true)).map(\.id), [junk])
        XCTAssertEqual(try store.refundRequests.queue(app: recipes).map(\.notificationUUID), ["rec-3"])
        XCTAssertEqual(try store.refundRequests.queue(app: fitness).map(\.notificationUUID), [])
        // A consent withdrawal is its notification's app's.
        let rescind = TestKit.body(type: "RESCIND_CONSENT", uuid: "rec-4", bundleId: Self.recipes, appAppleId: 2234567890,
                                   transaction: nil, renewal: nil)
        guard case .stored = try intake.ingest(rescind) else { return XCTFail("the consent withdrawal is stored") }
        XCTAssertEqual(try store.notifications.consentWithdrawals(app: recipes).map(\.event.notificationUUID), ["rec-4"])
        XCTAssertEqual(try store.notifications.consentWithdrawals(app: fitness).map(\.event.notificationUUID), [])

        // A backfill run records the app it asks about.
        let run = try store.backfills.start(environment: "Production", since: 0, until: 1, onlyFailures: false, operatorName: "t",
                                          now: 1, bundleId: Self.recipes)
        XCTAssertEqual(try store.backfills.unfinished()?.bundleId, Self.recipes)
        XCTAssertEqual(run.bundleId, Self.recipes)
    }

    /// A subscription known only by its renewal info (no transaction names an app) takes the
    /// app its notification was signed for.
    func testASubscriptionKnownOnlyByItsRenewalInfoTakesItsNotificationsApp() throws {
        let store = try Store.inMemory()
        let intake = try apps.twoAppIntake(store)
        let body = TestKit.body(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "rec-r",
                                bundleId: Self.recipes, appAppleId: 2234567890, transaction: nil,
                                renewal: TestKit.renewal(original: "7200000000000077"))
        guard case .stored = try intake.ingest(body) else { return XCTFail("stored") }
        XCTAssertEqual(try store.subscriptions.find(originalTransactionId: "7200000000000077")?.state.bundleId, Self.recipes)
    }

    /// A page, a search and a look-up scoped to one app find only its subscriptions; a
    /// record whose app is unknown is the only app's, and no app's when there are several.
    func testPagesSearchAndLookUpScopedToOneAppFindOnlyItsSubscriptions() throws {
        let store = try Store.inMemory()
        let intake = try apps.twoAppIntake(store)
        for (bundle, appleId, otid) in [(Self.fitness, Int64(1234567890), "7100000000000001"), (Self.fitness, 1234567890, "7100000000000002"),
                                        (Self.recipes, 2234567890, "7200000000000001")] {
            guard case .stored = try intake.ingest(apps.body(app: bundle, appleId: appleId, otid: otid, uuid: "n-" + otid)) else {
                return XCTFail(otid)
            }
        }
        // A subscription stored before apps were recorded.
        try store.db.run("UPDATE subscriptions SET bundle_id = NULL WHERE original_transaction_id = ?", ["7100000000000002"])
        let fitness = AppScope(bundleId: Self.fitness, includesUnknown: false)
        let recipes = AppScope(bundleId: Self.recipes, includesUnknown: false)
        func page(_ app: AppScope?) throws -> [String] { try store.subscriptions.page(SubscriptionQuery(app: app), limit: 10).map(\.state.originalTransactionId) }
        XCTAssertEqual(try page(nil), ["7100000000000001", "7100000000000002", "7200000000000001"])
        XCTAssertEqual(try page(fitness), ["7100000000000001"])
        XCTAssertEqual(try page(recipes), ["7200000000000001"])
        XCTAssertEqual(try page(AppScope(bundleId: Self.fitness, includesUnknown: true)), ["7100000000000001", "7100000000000002"])
        XCTAssertEqual(try store.subscriptions.search("0000000000000", app: recipes).map(\.state.originalTransactionId), ["7200000000000001"])
        XCTAssertEqual(try store.subscriptions.search("0000000000000", limit: 1, app: recipes).map(\.state.originalTransactionId), ["7200000000000001"],
                       "the limit counts only the app's")
        XCTAssertNil(try SubscriberReport.load(store: store, id: "7200000000000001", now: TestKit.anchor, app: fitness))
        XCTAssertNotNil(try SubscriberReport.load(store: store, id: "7200000000000001", now: TestKit.anchor, app: recipes))
        XCTAssertEqual(try store.notifications.list(app: recipes).map(\.event.notificationUUID), ["n-7200000000000001"])
    }

    /// On a generated store of three apps, each app's counts add up to the store's, for every
    /// metric, day and segment, cell for cell.
    func testEachAppsCountsAddUpToTheStoresOnAGeneratedStoreOfThreeApps() throws {
        let store = try Store.inMemory()
        let bundles = ["com.example.a", "com.example.b", "com.example.c"]
        _ = try StoreGenerator(subscribers: 300, now: TestKit.anchor, bundleIds: bundles).generate(into: store)
        try store.metrics.catchUpSegments()
        XCTAssertEqual(try store.metrics.segmentValues(.app), bundles)
        let utc = TimeZone(identifier: "UTC")!
        func report(_ app: String?) throws -> [DayCounts] {
            try DailyCountsReport.compute(store: store, from: "2025-05-01", to: "2026-06-01", timeZone: utc, segments: Set(CountSegment.allCases),
                                          period: .week, filter: app.map { SegmentFilter(dimension: .app, value: $0) })
        }
        let whole = try report(nil)
        let parts = try bundles.map(report)
        let additive = Metric.all.filter { !$0.isRate && !$0.isMoney }
        XCTAssertGreaterThan(whole.map { $0[.activePaid] }.reduce(0, +), 0)
        for part in parts { XCTAssertGreaterThan(part.map { $0[.activePaid] }.reduce(0, +), 0, "every app has subscriptions") }
        for (i, cell) in whole.enumerated() {
            for m in additive { XCTAssertEqual(parts.map { $0[i][m] }.reduce(0, +), cell[m], "\(m) in the week of \(cell.day)") }
            for (code, amounts) in cell.moneyByCurrency {
                for (m, amount) in amounts {
                    XCTAssertEqual(parts.map { $0[i].moneyByCurrency[code]?[m] ?? 0 }.reduce(0, +), amount, "\(m) in \(code), \(cell.day)")
                }
            }
        }
        // And the cohorts: each cohort's size and every cell's counts and money, app by app.
        for metric in CohortMetric.allCases {
            func cohorts(_ app: String?) throws -> CohortReport {
                try CohortReport.compute(store: store, metric: metric, filters: app.map { [CohortFilter(dimension: .app, value: $0)] } ?? [],
                                         segments: Set(CountSegment.allCases), now: TestKit.anchor)
            }
            let all = try cohorts(nil)
            let byApp = try bundles.map(cohorts)
            XCTAssertFalse(all.rows.isEmpty, "\(metric)")
            let byStart = byApp.map { Dictionary(uniqueKeysWithValues: $0.rows.map { ($0.start, $0) }) }
            for row in all.rows {
                XCTAssertEqual(byStart.map { $0[row.start]?.size ?? 0 }.reduce(0, +), row.size, "\(metric) \(row.label)")
                for (c, cell) in row.cells.enumerated() {
                    let appCells = byStart.map { $0[row.start].flatMap { $0.cells[c] } }
                    XCTAssertEqual(appCells.map { $0?.count ?? 0 }.reduce(0, +), cell?.count ?? 0, "\(metric) \(row.label) column \(c)")
                    XCTAssertEqual(appCells.map { $0?.revenue["USD"] ?? 0 }.reduce(0, +), cell?.revenue["USD"] ?? 0, "\(metric) \(row.label) column \(c)")
                }
            }
        }
    }

    // MARK: A store of an earlier subdesk

    /// A new, empty store at `version` on the engine the tests run on, and where it is.
    func storeAt(_ version: Int) throws -> (connection: any SQLConnection, location: String) {
        if let base = TestEngine.postgres() {
            let location = Store.freshPostgresLocation(base)
            let place = try PostgresLocation(location)
            let connection = try PostgresConnection(location: place, lockTimeoutMs: 10_000)
            try connection.execute("CREATE SCHEMA \(place.schema!)")
            try Migrations.migrate(connection, upTo: version)
            return (connection, location)
        }
        let path = scratchStoreFile("apps")
        let connection = try SQLiteConnection(path: path)
        try Migrations.migrate(connection, upTo: version)
        return (connection, path)
    }

    /// `made`'s rows in a store at `version`, migrated to the latest with nothing pending
    /// before: the subscriptions the migrations after `version` marked for recomputation, and
    /// where the migrated store is.
    func pendingAfterMigrating(_ made: Store, from version: Int) throws -> (pending: [String], location: String) {
        let (old, location) = try storeAt(version)
        try copyRows(from: made, into: old)
        try old.execute("DELETE FROM metrics_pending")
        XCTAssertEqual(try Migrations.migrate(old), version, "the store was at \(version)")
        let pending = try old.rows("SELECT original_transaction_id FROM metrics_pending ORDER BY 1", []) { $0.string(0) }
        old.close()
        return (pending, location)
    }

    /// Every row of `source` in `target` (a store at an earlier version), in the columns it has.
    func copyRows(from source: Store, into target: any SQLConnection) throws {
        try target.execute("BEGIN")
        for table in StoreUpkeep.copiedTables {
            let theirs = Set(try target.columns(of: table))
            let columns = try source.db.columns(of: table).filter { theirs.contains($0) }
            guard !columns.isEmpty else { continue }
            try target.execute("DELETE FROM \(table)")
            let insert = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES ("
                + columns.map { _ in "?" }.joined(separator: ",") + ")"
            try source.db.stream("SELECT \(columns.joined(separator: ", ")) FROM \(table)") { row in
                try target.run(insert, (0..<columns.count).map { row.value(Int32($0)) })
            }
        }
        try target.execute("COMMIT")
    }

    /// The counts of one store over the test's weeks, as `counts --json` prints them.
    func counts(_ store: Store) throws -> Data {
        let rows = try DailyCountsReport.compute(store: store, from: "2026-05-01", to: "2026-06-30", timeZone: TimeZone(identifier: "UTC")!)
        return try JSONSerialization.data(withJSONObject: rows.map { $0.jsonObject() }, options: [.sortedKeys])
    }

    /// A store at schema 26 with intake counters (counted before intake knew apps) opens at
    /// the latest schema with every count kept, under the unknown app: the on-call metrics
    /// read them as the one configured app's, and as `other` beside a second app.
    func testIntakeCountsOfAStoreAtSchema26AreKeptAndReadAsTheOneAppsOrOther() throws {
        let (connection, location) = try storeAt(26)
        try connection.execute("""
            INSERT INTO intake_counts (environment, type, outcome, reason, count, last_ms) VALUES
                ('Production', 'DID_RENEW', 'stored', '', 41, 1780000000000),
                ('Production', 'DID_RENEW', 'duplicate', '', 3, 1780000100000),
                ('', '', 'rejected', 'signature', 5, 1780000200000)
            """)
        let store = try Store(path: location)
        XCTAssertEqual(store.schemaVersion, Migrations.latestVersion)
        let reading = try OnCallReading.read(from: store, now: 1780000300000)
        func samples(_ apps: [ConfiguredApp], _ name: String) -> [String] {
            var inputs = OnCallInputs(reading: reading, roots: [], quarantineBudgetBytes: nil)
            inputs.apps = ConfiguredApps(apps: apps, fromSections: true)
            return OnCallMetrics.exposition(inputs).split(separator: "\n").map(String.init).filter { $0.hasPrefix(name + "{") }
        }
        let fitness = ConfiguredApp(name: "fitness", bundleId: Self.fitness)
        XCTAssertEqual(samples([fitness], "subdesk_notifications_received_total"), [
            #"subdesk_notifications_received_total{app="fitness",environment="Production",type="DID_RENEW",outcome="duplicate",reason="none"} 3"#,
            #"subdesk_notifications_received_total{app="fitness",environment="Production",type="DID_RENEW",outcome="stored",reason="none"} 41"#,
            #"subdesk_notifications_received_total{app="fitness",environment="unknown",type="unknown",outcome="rejected",reason="signature"} 5"#,
        ])
        XCTAssertEqual(samples([fitness], "subdesk_last_notification_timestamp_seconds"),
                       [#"subdesk_last_notification_timestamp_seconds{app="fitness",environment="Production"} 1780000100"#])
        let two = [fitness, ConfiguredApp(name: "recipes", bundleId: Self.recipes)]
        XCTAssertEqual(samples(two, "subdesk_notifications_received_total").map { $0.replacingOccurrences(of: "app=\"other\",", with: "") },
                       samples([fitness], "subdesk_notifications_received_total").map { $0.replacingOccurrences(of: "app=\"fitness\",", with: "") },
                       "beside a second app, the same counts under other")
        XCTAssertTrue(samples(two, "subdesk_notifications_received_total").allSatisfy { $0.contains("{app=\"other\",") })
    }

    /// A store made by the subdesk before migration 25 (one app) migrates: each record takes
    /// its app from the transactions Apple signed, and the counts are the same as before.
    func testAStoreOfOneAppFromBeforeMigratesWithEachRecordsAppAndTheSameCounts() throws {
        let made = try Store(path: Store.testLocation(file: scratchStoreFile("apps-made")))
        let intake = TestKit.intake(made)
        let app = ScenarioBuilder.demoBundleId
        for n in 1...6 {
            let otid = "81000000000000\(n)0"
            let t = TestKit.transaction(id: otid, original: otid, purchase: TestKit.anchor - Int64(20 + n) * TestKit.day,
                                        expires: TestKit.anchor + Int64(n - 3) * TestKit.day)
            guard case .stored = try intake.ingest(TestKit.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "old-\(n)",
                                                                transaction: t, renewal: TestKit.renewal(original: otid))) else {
                return XCTFail("old-\(n) is stored")
            }
        }
        let purchase = TestKit.transaction(id: "8100000000000999", original: "8100000000000999", product: "app.pack",
                                           expires: nil, extra: ["type": "Consumable"])
        guard case .stored = try intake.ingest(TestKit.body(type: "CONSUMPTION_REQUEST", uuid: "old-c", transaction: purchase, renewal: nil,
                                                            extraData: ["consumptionRequestReason": "UNINTENDED_PURCHASE"])) else {
            return XCTFail("the consumption request is stored")
        }
        let before = try counts(made)

        let (old, location) = try storeAt(22)
        try copyRows(from: made, into: old)
        old.close()
        let migrated = try Store(path: location)
        XCTAssertEqual(migrated.schemaVersion, Migrations.latestVersion)
        XCTAssertEqual(try migrated.db.first("SELECT count(*) FROM subscriptions WHERE bundle_id = ?", [app]) { $0.int(0) }, 6)
        XCTAssertEqual(try migrated.db.first("SELECT count(*) FROM notifications WHERE bundle_id = ?", [app]) { $0.int(0) }, 7)
        XCTAssertEqual(try column(migrated, "SELECT bundle_id FROM refund_requests WHERE notification_uuid = ?", "old-c"), app)
        XCTAssertEqual(try migrated.subscriptions.find(originalTransactionId: "8100000000000010")?.state.bundleId, app)
        // Every share is queued for recomputation (with its app); the report brings them up
        // to date itself, the counts are the same, and all of them the app's.
        XCTAssertEqual(try migrated.metrics.pendingShareCount(), 6)
        XCTAssertEqual(String(decoding: try counts(migrated), as: UTF8.self), String(decoding: before, as: UTF8.self))
        XCTAssertEqual(try migrated.metrics.pendingShareCount(), 0)
        try migrated.metrics.catchUpSegments()
        XCTAssertEqual(try migrated.metrics.segmentValues(.app), [app])
        // The app is named: the one configured app, by the bundle id the record carries.
        let one = ConfiguredApps(apps: [ConfiguredApp(name: "default", bundleId: app)], fromSections: false)
        XCTAssertEqual(one.appJSON(ofRecord: try migrated.subscriptions.find(originalTransactionId: "8100000000000010")?.state.bundleId)["name"] as? String,
                       "default")
        XCTAssertEqual(one.appJSON(ofRecord: nil)["bundleId"] as? String, app, "a record whose app is unknown is the one app's")
    }
}
