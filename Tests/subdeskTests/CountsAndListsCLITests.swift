import Foundation
import XCTest
@testable import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// What `counts` and `search` print as a user reads them: money to the cent, notices of
/// the app the rows are of, apps in the config file's order, and a revoked subscription's
/// end as its detail gives it.
final class CountsAndListsCLITests: SubdeskTestCase, RunsOnEveryEngine {
    /// The text table's money to the cent with thousands grouped, each cell the JSON's
    /// amount, none cut; CSV and JSON keep plain numbers.
    func testCountsTextTableGivesMoneyToTheCent() throws {
        let db = try demoStore()
        let range = ["--from", "2026-01-01", "--to", "2026-12-31", "--period", "month"]
        let text = try run(["counts", "--db", db] + range)
        XCTAssertEqual(text.status, 0, text.stderr)
        let json = try XCTUnwrap(try self.json(try run(["counts", "--db", db, "--json"] + range).stdout) as? [[String: Any]])
        let lines = text.stdout.split(separator: "\n").map(String.init)
        let header = try XCTUnwrap(lines.first { $0.hasPrefix("MONTH ") }).split(separator: " ").map(String.init)
        let rows = lines.filter { $0.hasPrefix("2026-") }.map { $0.split(separator: " ").map(String.init) }
        XCTAssertEqual(rows.count, json.count)
        var amounts = 0
        for (row, period) in zip(rows, json) {
            for (column, key) in [("MRR", "mrr"), ("REVENUE", "revenue")] {
                let cell = row[try XCTUnwrap(header.firstIndex(of: column))]
                let value = try XCTUnwrap(period[key] as? Double, "\(key) of \(period["day"] ?? "?")")
                XCTAssertEqual(cell, Self.cents(value), "\(column) of \(row[0])")
                XCTAssertTrue(cell.contains("."), "\(column) of \(row[0]) is to the cent: \(cell)")
                if value > 0 { amounts += 1 }
            }
        }
        XCTAssertGreaterThan(amounts, 0, "the demo has money to show")
        let csv = try run(["counts", "--db", db, "--csv"] + range).stdout
        let csvLines = csv.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let mrr = try XCTUnwrap(csvLines.first?.firstIndex(of: "mrr"))
        XCTAssertEqual(csvLines.dropFirst().map { Double($0[mrr]) }, json.map { $0["mrr"] as? Double }, "CSV keeps plain numbers")
    }

    /// `1,499.04`: to the cent, thousands grouped, as a reader expects it.
    static func cents(_ units: Double) -> String {
        let formatter = NumberFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.numberStyle = .decimal
        formatter.usesGroupingSeparator = true
        formatter.groupingSeparator = ","
        formatter.groupingSize = 3
        formatter.minimumFractionDigits = 2
        formatter.maximumFractionDigits = 2
        return formatter.string(from: NSNumber(value: units)) ?? "?"
    }

    /// `search` shows a revoked subscription's access end, the date `show` gives, not the
    /// refunded period's signed expiry a year ahead.
    func testSearchShowsWhenARevokedSubscriptionsAccessEndedAsShowDoes() throws {
        let db = try demoStore()
        // The demo's refunded yearly subscription.
        let show = try run(["show", "user-1017", "--db", db])
        XCTAssertEqual(show.status, 0, show.stderr)
        let detail = try XCTUnwrap(show.stdout.range(of: #"Access ended \d{4}-\d\d-\d\d \d\d:\d\d"#, options: .regularExpression),
                                   show.stdout)
        let ended = String(show.stdout[detail].dropFirst("Access ended ".count))
        let search = try run(["search", "user-1017", "--db", db])
        let row = try XCTUnwrap(search.stdout.split(separator: "\n").first { $0.contains("revoked") }, search.stdout)
        XCTAssertTrue(row.contains(ended), "search: \(row)\nshow: Access ended \(ended)")
        let json = try XCTUnwrap(try self.json(try run(["search", "user-1017", "--db", db, "--json"]).stdout) as? [[String: Any]])
        XCTAssertEqual((json.first?["accessEnded"] as? String)?.prefix(16).replacingOccurrences(of: "T", with: " "), ended)
    }
}

/// `counts` with several apps: its notices are of the app its rows are of, and `--by app`
/// puts the apps in the order the config file declares them.
final class SeveralAppsCountsCLITests: SubdeskTestCase, RunsOnEveryEngine {
    static let root = repoRoot + "/sample-data/test-ca/root.der"
    static let recipes = (name: "recipes", bundleId: "com.example.recipes", appleId: Int64(2234567890))
    static let fitness = (name: "fitness", bundleId: "com.example.fitness", appleId: Int64(1234567890))

    /// Recipes first: the config file's order is not the bundle ids' (nor the names').
    func writeConfig() throws {
        try FileManager.default.createDirectory(atPath: dir + "/config/subdesk", withIntermediateDirectories: true)
        try """
        root_ca = \(Self.root)

        [app recipes]
        bundle_id = com.example.recipes
        app_apple_id = 2234567890

        [app fitness]
        bundle_id = com.example.fitness
        app_apple_id = 1234567890

        """.write(toFile: dir + "/config/subdesk/config", atomically: true, encoding: .utf8)
    }

    static func rescindBody(_ bundleId: String, appleId: Int64, uuid: String, appTransactionId: String) throws -> Data {
        let signer = try SampleData.locate(explicit: Self.repoRoot + "/sample-data").signer()
        func signed(_ object: [String: Any]) throws -> String { try signer.sign(payload: try JSONSerialization.data(withJSONObject: object)) }
        let now = DateText.nowMillis()
        let app: [String: Any] = ["receiptType": "Production", "appAppleId": appleId, "bundleId": bundleId,
                                  "appTransactionId": appTransactionId, "originalPurchaseDate": now - 86_400_000, "signedDate": now]
        let appData: [String: Any] = ["appAppleId": appleId, "bundleId": bundleId, "environment": "Production",
                                      "signedAppTransactionInfo": try signed(app)]
        let payload: [String: Any] = ["notificationType": "RESCIND_CONSENT", "notificationUUID": uuid, "version": "2.0",
                                      "signedDate": now, "appData": appData]
        return try JSONSerialization.data(withJSONObject: ["signedPayload": try signed(payload)])
    }

    func twoAppStore() throws -> String {
        try writeConfig()
        let db = Store.testLocation(file: dir + "/apps.db")
        var files: [String] = []
        for (app, otid) in [(Self.fitness, "7100000000000001"), (Self.recipes, "7200000000000001")] {
            let file = dir + "/\(otid).json"
            try SeveralAppsCLITests.body(app.bundleId, appleId: app.appleId, otid: otid).write(to: URL(fileURLWithPath: file))
            files.append(file)
        }
        // Two withdrawals of consent, both the recipes app's.
        for n in 1...2 {
            let file = dir + "/rescind-\(n).json"
            try Self.rescindBody(Self.recipes.bundleId, appleId: Self.recipes.appleId, uuid: "rescind-\(n)", appTransactionId: "99000\(n)")
                .write(to: URL(fileURLWithPath: file))
            files.append(file)
        }
        let ingested = try run(["ingest", "--db", db] + files)
        XCTAssertEqual(ingested.status, 0, ingested.stderr)
        return db
    }

    func testTheConsentNoticeUnderCountsIsOfTheAppItsRowsAreOf() throws {
        let db = try twoAppStore()
        func notice(_ scope: [String]) throws -> String? {
            let r = try run(["counts", "--db", db] + scope)
            XCTAssertEqual(r.status, 0, r.stderr)
            return r.stderr.split(separator: "\n").map(String.init).last { $0.contains("consent") }?
                .replacingOccurrences(of: "subdesk: ", with: "")
        }
        XCTAssertEqual(try notice([]), "consent  2 open withdrawals (subdesk consent)")
        XCTAssertEqual(try notice(["--app", "recipes"]), "consent  2 open withdrawals (subdesk consent)")
        XCTAssertEqual(try notice(["--app", "fitness"]), "consent  0 open withdrawals (subdesk consent)")
        XCTAssertEqual(try notice(["--where", "app=fitness"]), "consent  0 open withdrawals (subdesk consent)")
    }

    func testCountsByAppPutsTheAppsInTheConfigFilesOrder() throws {
        let db = try twoAppStore()
        let text = try run(["counts", "--db", db, "--by", "app"])
        XCTAssertEqual(text.status, 0, text.stderr)
        let header = try XCTUnwrap(text.stdout.split(separator: "\n").first { $0.hasPrefix("DAY ") }, text.stdout)
        XCTAssertEqual(header.split(separator: " ").map(String.init), ["DAY", "recipes", "fitness"])
        let csv = try run(["counts", "--db", db, "--by", "app", "--csv"])
        XCTAssertEqual(csv.stdout.split(separator: "\n").first, "day,recipes,fitness")
    }
}
