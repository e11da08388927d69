import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// The store: schema, lookups by every id, keyset paging, and daily counts.
final class StoreTests: XCTestCase, RunsOnEveryEngine {
    static let dir = NSTemporaryDirectory() + "subdesk-store-\(UUID().uuidString)"

    /// A store with one instance of every scenario, built at the test anchor: a file, or on
    /// the PostgreSQL pass a new schema, unless the test is about SQLite's file (`sqliteFile`).
    func demoStore(copies: Int = 1, sqliteFile: Bool = false) throws -> Store {
        try FileManager.default.createDirectory(atPath: Self.dir, withIntermediateDirectories: true)
        let file = Self.dir + "/\(UUID().uuidString).db"
        let store = try Store(path: sqliteFile ? file : Store.testLocation(file: file))
        _ = try DemoStoreBuilder(sample: TestKit.sample, copies: copies).build(into: store, anchor: TestKit.anchor)
        return store
    }

    override class func tearDown() {
        try? FileManager.default.removeItem(atPath: dir)
    }

    func testSchemaIsMigratedOnceInWALMode() throws {
        let store = try demoStore(sqliteFile: true)
        XCTAssertEqual(store.schemaVersion, Migrations.latestVersion)
        let reopened = try Store(path: store.path)
        XCTAssertEqual(reopened.schemaVersion, Migrations.latestVersion)
        XCTAssertEqual(try reopened.db.first("PRAGMA journal_mode") { $0.string(0) }, "wal")
        XCTAssertEqual(try reopened.subscriptions.count(), try store.subscriptions.count())
    }

    func testLookupUsesAnIndexForEveryKindOfId() throws {
        let store = try demoStore(sqliteFile: true)
        for (sql, arg) in [
            ("SELECT id FROM subscribers WHERE user_id = ?", "user-1001"),
            ("SELECT id FROM subscribers WHERE app_account_token = ?", "x"),
            ("SELECT original_transaction_id FROM subscriptions WHERE original_transaction_id = ?", "x"),
            ("SELECT original_transaction_id FROM transactions WHERE transaction_id = ?", "x"),
            ("SELECT original_transaction_id FROM subscriptions WHERE product_id = ?", "x"),
            ("SELECT original_transaction_id FROM subscriptions WHERE status = ?", "1"),
        ] {
            let plan = try store.db.rows("EXPLAIN QUERY PLAN " + sql, [arg]) { $0.string(3) }.joined(separator: " ")
            XCTAssertTrue(plan.contains("USING") && (plan.contains("INDEX") || plan.contains("PRIMARY KEY")), "\(sql): \(plan)")
        }
    }

    func testLookupByEveryKindOfId() throws {
        let store = try demoStore()
        let otid = ScenarioBuilder.originalTransactionId(instance: 0)
        let byUser = try XCTUnwrap(try store.subscribers.lookup("user-1001"))
        XCTAssertEqual(try store.subscribers.lookup(otid), byUser)
        XCTAssertEqual(try store.subscribers.lookup(String(Int64(otid)! + 1)), byUser, "a later transaction id")
        XCTAssertEqual(try store.subscribers.lookup(ScenarioBuilder.appAccountToken(instance: 0)), byUser)
        XCTAssertNil(try store.subscribers.lookup("nobody"))
        XCTAssertEqual(try store.subscriptions.search("app.legacy").map(\.state.productId), ["app.legacy.monthly"])
    }

    func testKeysetPagingCoversEveryRowOnceInBothDirections() throws {
        let store = try demoStore(copies: 3)
        let total = try store.subscriptions.count()
        for query in [SubscriptionQuery(sort: .expires), SubscriptionQuery(sort: .lastEvent, descending: true),
                      SubscriptionQuery(statuses: [.active, .gracePeriod])] {
            var seen: [String] = []
            var cursor: PageCursor?
            while true {
                let page = try store.subscriptions.page(query, after: cursor, limit: 7)
                if page.isEmpty { break }
                seen += page.map(\.state.originalTransactionId)
                cursor = SubscriptionTable.cursor(for: page.last!, in: query)
            }
            XCTAssertEqual(Set(seen).count, seen.count, "no row twice")
            if query.statuses.isEmpty { XCTAssertEqual(seen.count, total) }
            // Paging back from the end yields the same rows in the same order.
            var back: [String] = []
            cursor = nil
            while true {
                let page = try store.subscriptions.page(query, after: cursor, backward: true, limit: 5)
                if page.isEmpty { break }
                back = page.map(\.state.originalTransactionId) + back
                cursor = SubscriptionTable.cursor(for: page.first!, in: query)
            }
            XCTAssertEqual(back, seen)
        }
        // The kept status counts agree with counting the rows.
        var counted: [SubscriptionStatus: Int] = [:]
        try store.db.query("SELECT status, count(*) FROM subscriptions GROUP BY status") { counted[SubscriptionStatus(rawValue: $0.int(0))!] = $0.int(1) }
        XCTAssertEqual(try store.subscriptions.statusCounts(), counted)
        let filtered = try store.subscriptions.page(SubscriptionQuery(text: "user-1010-2"), limit: 50)
        XCTAssertEqual(filtered.map(\.subscriber.userId), ["user-1010-2"])
    }

    func testAPageAfterACursorSeeksTheListsIndexInsteadOfReadingItFromTheStart() throws {
        let store = try demoStore(sqliteFile: true)
        let cursor = PageCursor(key: TestKit.anchor, originalTransactionId: ScenarioBuilder.originalTransactionId(instance: 0))
        let app = AppScope(bundleId: ScenarioBuilder.demoBundleId, includesUnknown: false)
        for query in [SubscriptionQuery(sort: .expires), SubscriptionQuery(sort: .lastEvent, descending: true),
                      SubscriptionQuery(sort: .expires, app: app), SubscriptionQuery(sort: .lastEvent, app: app),
                      SubscriptionQuery(statuses: [.active], sort: .expires)] {
            for backward in [false, true] {
                let bounds = SubscriptionTable.pageBounds(query, after: cursor, backward: backward, dialect: store.dialect)
                let plan = try store.db.rows("""
                    EXPLAIN QUERY PLAN SELECT s.original_transaction_id FROM \(SubscriptionTable.rowSource)
                    WHERE \(bounds.conditions.joined(separator: " AND ")) ORDER BY \(bounds.order) LIMIT 50
                    """, bounds.values) { $0.string(3) }.joined(separator: " ")
                // The index is searched from the cursor's key on (`<expr>>?` or `<expr><?`), not scanned.
                XCTAssertTrue(plan.contains("<expr>>?") || plan.contains("<expr><?"), "\(query), backward \(backward): \(plan)")
            }
        }
    }

    func testDailyCountsFollowTheScenarios() throws {
        let store = try demoStore()
        let utc = TimeZone(identifier: "UTC")!
        let days = try DailyCountsReport.compute(store: store, from: "2026-04-15", to: "2026-05-31", timeZone: utc)
        XCTAssertEqual(days.count, 47)
        func day(_ offset: Millis) -> DayCounts {
            let name = DateText.format(TestKit.anchor + offset * TestKit.day, "yyyy-MM-dd", zone: utc)
            return days.first { $0.day == name }!
        }
        // voluntary-expiry expired 20 days before the anchor; product-not-for-sale 15 days before.
        XCTAssertEqual(day(-20)[.expiredVoluntary], 1)
        XCTAssertEqual(day(-15)[.expiredProductNotForSale], 1)
        XCTAssertEqual(day(-30)[.expiredPriceIncrease], 1)
        // in-grace-period failed 5 days before the anchor, in-billing-retry 3 days before.
        XCTAssertEqual(day(-5)[.gracePeriodEntries], 1)
        XCTAssertGreaterThanOrEqual(day(-1)[.inGracePeriod], 1)
        XCTAssertGreaterThanOrEqual(day(-1)[.inBillingRetry], 1)
        XCTAssertEqual(day(-3)[.trialStarts], 1, "in-free-trial started 3 days before")
        XCTAssertEqual(day(-33)[.trialConversions], 1, "free-trial-then-paid converted 33 days before")
        // Family-shared subscriptions are counted apart.
        let family = try DailyCountsReport.compute(store: store, from: "2026-05-27", to: "2026-05-27", timeZone: utc, segments: [.familyShared])
        XCTAssertEqual(family[0][.newPaidSubscriptions], 1, "family-sharing-active subscribed 5 days before")
        XCTAssertEqual(day(-5)[.newPaidSubscriptions], 0, "...and not among paid ones")
        // Days follow the time zone asked for.
        let tokyo = try DailyCountsReport.compute(store: store, from: "2026-05-01", to: "2026-05-01", timeZone: TimeZone(identifier: "Asia/Tokyo")!)
        XCTAssertEqual(tokyo[0].start, DateText.parse("2026-04-30T15:00:00Z"))
    }
}

/// Raw bodies are kept byte for byte, V2 ones compactly (certificate chains once).
final class StoredBodyTests: XCTestCase, RunsOnEveryEngine {
    func testBodiesComeBackByteForByteAndV2BodiesAreSmall() throws {
        let store = try Store.inMemory()
        let intake = TestKit.intake(store)
        let scenarios = try TestKit.sample.scenarios()
        var bodies: [Data] = []
        for (i, s) in scenarios.enumerated() {
            bodies += try ScenarioBuilder(signer: TestKit.signer).bodies(for: s, instance: i, anchor: TestKit.anchor)
        }
        // A body with spacing, and one with a non-canonical base64url tail, are kept as they came.
        let other = try ScenarioBuilder(signer: TestKit.signer).bodies(for: scenarios[0], instance: 999, anchor: TestKit.anchor)[0]
        let spaced = Data(String(decoding: other, as: UTF8.self).replacingOccurrences(of: "{\"signedPayload\":", with: "{ \"signedPayload\" : ").utf8)
        // Apple's form with a line feed after it is verified as usual but kept as it came.
        let trailing = try ScenarioBuilder(signer: TestKit.signer).bodies(for: scenarios[1], instance: 998, anchor: TestKit.anchor)[0]
            + Data("\n".utf8)
        let v1 = IntakeTests.v1Body(type: "DID_RENEW")
        var policy = TestKit.policy
        policy.allowV1 = true
        intake.policy = policy
        for body in bodies + [v1, trailing] {
            guard case .stored = try intake.ingest(body) else { return XCTFail("not stored") }
        }
        var duplicateCheck = try intake.ingest(spaced)
        if case .stored = duplicateCheck {} else { XCTFail("spaced body: \(duplicateCheck)") }
        duplicateCheck = try intake.ingest(bodies[0])
        XCTAssertEqual(duplicateCheck, .duplicate(notificationUUID: try XCTUnwrap(try store.notifications.uuid(bodySHA256: ContentDigest.sha256Hex(bodies[0])))))
        let stored = try store.notifications.list(limit: 10_000)
        XCTAssertEqual(Set(stored.map(\.body)), Set(bodies + [v1, spaced, trailing]), "every body byte for byte")
        let sizes = try store.db.rows("SELECT body_format, length(body) FROM notifications WHERE version = 2") { ($0.int(0), $0.int(1)) }
        let compact = sizes.filter { $0.0 == 1 }
        XCTAssertEqual(compact.count, bodies.count, "every canonical V2 body is compact")
        XCTAssertEqual(sizes.filter { $0.0 == 0 }.count, 2, "the spaced one and the one with a line feed are kept raw")
        let average = Double(compact.map(\.1).reduce(0, +)) / Double(compact.count)
        XCTAssertLessThan(average, 1536, "average stored V2 body \(average) bytes")
        XCTAssertEqual(try store.db.first("SELECT count(*) FROM jws_headers") { $0.int(0) }, 1, "one chain, stored once")
        let original = Double(bodies.map(\.count).reduce(0, +)) / Double(bodies.count)
        print("stored V2 body: \(Int(average)) bytes on average, from \(Int(original)) as received")
    }

    /// Whatever the body, compacting either declines or gives back exactly the same bytes.
    func testCompactFormNeverChangesABody() throws {
        let scenarios = try TestKit.sample.scenarios()
        let bodies = try ScenarioBuilder(signer: TestKit.signer).bodies(for: scenarios[8], instance: 5, anchor: TestKit.anchor)
        var headers: [String] = []
        func id(_ segment: String) -> Int64 {
            if let i = headers.firstIndex(of: segment) { return Int64(i) }
            headers.append(segment)
            return Int64(headers.count - 1)
        }
        var rng = StoreGenerator.Random(state: 7)
        var compacted = 0, declined = 0
        let alphabet = Array("AZaz09-_.\"{}:\u{1}\u{0}".utf8)
        for round in 0..<400 {
            var bytes = [UInt8](bodies[round % bodies.count])
            if round >= bodies.count {
                for _ in 0..<(1 + rng.int(0..<3)) {
                    bytes[rng.int(0..<bytes.count)] = alphabet[rng.int(0..<alphabet.count)]
                }
            }
            let body = Data(bytes)
            guard let compact = CompactBody.encode(body, headerId: id) else { declined += 1; continue }
            XCTAssertEqual(try CompactBody.decode(compact) { headers[Int($0)] }, body, "round \(round)")
            compacted += 1
        }
        XCTAssertGreaterThan(compacted, 50)
        XCTAssertGreaterThan(declined, 10)
    }

    /// Payload JSON either tokenizes to something that detokenizes to the very same bytes,
    /// or is declined: exactly when it holds a byte that reads back as a token code.
    func testTokenizedPayloadsComeBackExactlyOrAreDeclined() throws {
        let fragments: [[UInt8]] = CompactBody.patternBytes + ["\"", "\\", ":", "{", "}", ",", "1", "abc", "\"x\":", "\"USD",
                                                               "\u{0}", "\u{1}", "\u{1F}", "\u{9}", "\u{0B}", "é"].map { Array($0.utf8) }
        let codeBytes = Set(CompactBody.singleCodes + [CompactBody.escape])
        var rng = StoreGenerator.Random(state: 3)
        var shortened = 0, declined = 0
        for _ in 0..<3000 {
            var json: [UInt8] = []
            for _ in 0..<rng.int(0..<24) { json += fragments[rng.int(0..<fragments.count)] }
            if let tokens = CompactBody.tokenizeChecked(json) {
                XCTAssertEqual(try CompactBody.detokenize(tokens[...]), json)
                XCTAssertLessThanOrEqual(tokens.count, json.count)
                if tokens.count < json.count { shortened += 1 }
            } else {
                XCTAssertTrue(json.contains { codeBytes.contains($0) }, "declined without a code byte: \(json)")
                declined += 1
            }
        }
        XCTAssertGreaterThan(shortened, 1000)
        XCTAssertGreaterThan(declined, 500)
    }

    func testACorruptCompactBodyIsReportedNotGuessed() throws {
        XCTAssertThrowsError(try CompactBody.decode(Data([1, 5]), header: { _ in "h" })) { error in
            XCTAssertTrue("\(error)".contains("stored body is corrupt"), "\(error)")
        }
    }
}
