import Foundation
import SubscriptionCore
import XCTest
import SubdeskTestKit
@testable import SubdeskScenarios

/// `subdesk cohorts`: JSON and CSV give every number, the text reads as a table with its
/// definitions, and bad options are refused with what is wrong.
final class CohortsCLITests: SubdeskTestCase, RunsOnEveryEngine {
    func testCohortsJSONAndCSVAreCompleteAndTheTextIsReadable() throws {
        let db = try demoStore()
        let range = ["--from", "2025-01", "--to", DateText.format(DateText.nowMillis(), "yyyy-MM", zone: TimeZone(identifier: "UTC")!)]
        let r = try run(["cohorts", "--db", db, "--json"] + range)
        XCTAssertEqual(r.status, 0, r.stderr)
        let o = try XCTUnwrap(try json(r.stdout) as? [String: Any])
        XCTAssertEqual(o["metric"] as? String, "retention")
        let cohorts = try XCTUnwrap(o["cohorts"] as? [[String: Any]])
        XCTAssertFalse(cohorts.isEmpty)
        // The sizes are the daily counts' new paid subscriptions over the same months.
        let counts = try run(["counts", "--db", db, "--json", "--period", "month", "--from", "2025-01-01",
                              "--to", DateText.format(DateText.nowMillis(), "yyyy-MM-dd", zone: TimeZone(identifier: "UTC")!)])
        let months = try XCTUnwrap(try json(counts.stdout) as? [[String: Any]])
        XCTAssertEqual(cohorts.reduce(0) { $0 + ($1["size"] as! Int) }, months.reduce(0) { $0 + ($1["newPaidSubscriptions"] as! Int) })
        for c in cohorts {
            let first = try XCTUnwrap((c["cells"] as? [Any])?.first as? [String: Any])
            XCTAssertEqual(first["share"] as? Double, 1, "period 0 is 100%")
        }
        let ltv = try run(["cohorts", "--db", db, "--json", "--metric", "ltv"] + range)
        let ltvCells = try XCTUnwrap(((try json(ltv.stdout) as? [String: Any])?["cohorts"] as? [[String: Any]])?.first?["cells"] as? [Any])
        let cell = try XCTUnwrap(ltvCells.first as? [String: Any])
        for key in ["revenue", "perMember", "perPayer", "revenueByCurrency", "refunds", "count", "complete"] {
            XCTAssertNotNil(cell[key], "ltv cells give \(key)")
        }
        let csv = try run(["cohorts", "--db", db, "--csv", "--metric", "ltv"] + range)
        let lines = csv.stdout.split(separator: "\n")
        XCTAssertEqual(lines.first, "cohort,value,size,column,unit,count,share,reactivated,revenue,per_member,per_payer,refunds,currency,complete")
        let ltvObject = try XCTUnwrap(try json(ltv.stdout) as? [String: Any])
        let cellCount = (ltvObject["cohorts"] as! [[String: Any]]).reduce(0) { $0 + ($1["cells"] as! [Any]).filter { !($0 is NSNull) }.count }
        XCTAssertEqual(lines.count - 1, cellCount, "one line per cell")
        XCTAssertTrue(lines.dropFirst().allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).count == 14 }, csv.stdout)
        // Unrounded: a per-member value keeps its digits.
        XCTAssertTrue(lines.dropFirst().contains { $0.split(separator: ",", omittingEmptySubsequences: false)[9].contains(".") })
        let text = try run(["cohorts", "--db", db] + range)
        XCTAssertTrue(text.stdout.hasPrefix("subscription retention by month cohort (UTC)"), text.stdout)
        XCTAssertTrue(text.stdout.contains("COHORT") && text.stdout.contains("100.0%"), text.stdout)
        XCTAssertTrue(text.stdout.contains("- period N: still in the first run"), "definitions under the table")
        let weeks = try run(["cohorts", "--db", db, "--period", "week", "--metric", "trial"] + ["--from", "2025-W01"])
        XCTAssertEqual(weeks.status, 0, weeks.stderr)
        XCTAssertTrue(weeks.stdout.contains("WEEK"), weeks.stdout)
    }

    /// `--where` options narrow the same way in any order: a product filter given first does
    /// not stop a later `ownership=` from choosing the family-shared segment.
    func testWhereOptionsNarrowTheSameInAnyOrder() throws {
        let db = try demoStore()
        let product = ["--where", "product=app.family.monthly"], shared = ["--where", "ownership=FAMILY_SHARED"]
        let first = try run(["cohorts", "--db", db, "--json", "--from", "2025-01"] + product + shared)
        let second = try run(["cohorts", "--db", db, "--json", "--from", "2025-01"] + shared + product)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(second.status, 0, second.stderr)
        let a = try XCTUnwrap(try json(first.stdout) as? [String: Any]), b = try XCTUnwrap(try json(second.stdout) as? [String: Any])
        XCTAssertEqual(a["segments"] as? [String], ["family_shared"], first.stdout)
        // Everything but the moment each report was taken.
        XCTAssertEqual(NSDictionary(dictionary: a.filter { $0.key != "asOf" }).isEqual(to: b.filter { $0.key != "asOf" }), true,
                       "the same report either way")
    }

    func testCohortsRefusesBadOptions() throws {
        let db = try demoStore()
        for (args, says) in [(["--where", "product=app.montly"], "no cohort has product app.montly"),
                             (["--where", "colour=red"], "no cohort dimension colour"),
                             (["--where", "plan=monthly"], "cohorts are not split by plan"),
                             (["--by", "colour"], "--by takes one of"),
                             (["--metric", "arpu"], "--metric is retention, ltv or trial"),
                             (["--period", "day"], "--period is month or week"),
                             (["--from", "2026-13"], "is not a month"),
                             (["--from", "2026-05", "--to", "2026-01"], "is after"),
                             (["--segment", "sandbox", "--where", "ownership=FAMILY_SHARED"], "leave nothing")] {
            let refused = try run(["cohorts", "--db", db] + args)
            XCTAssertEqual(refused.status, 2, "\(args): \(refused.stdout)")
            XCTAssertTrue(refused.stderr.contains(says), "\(args): \(refused.stderr)")
        }
    }

    /// Apple's example of a retention offer taken on the cancellation sheet (a RENEWAL at price
    /// 0, offerType 5, offerDiscountType FREE_TRIAL, offerPeriod P3M) puts its subscription
    /// under saved=retention; a subscription of the same month never saved is under none; the
    /// cohort's offer= (its first paid period's) never shows the retention offer.
    func testARetentionOfferPutsItsSubscriptionUnderSavedRetention() throws {
        let db = Store.testLocation(file: dir + "/saved.db")
        let now = DateText.nowMillis(), day: Int64 = 86_400_000
        let start = now - 100 * day, renewed = now - 70 * day
        var bodies = Data()
        for otid in ["5300000000000010", "5300000000000020"] {
            let first: [String: Any] = [
                "transactionId": otid, "originalTransactionId": otid, "productId": "app.monthly", "bundleId": ScenarioBuilder.demoBundleId,
                "purchaseDate": start, "originalPurchaseDate": start, "expiresDate": renewed, "signedDate": start,
                "environment": "Production", "inAppOwnershipType": "PURCHASED", "type": "Auto-Renewable Subscription",
                "transactionReason": "PURCHASE", "price": 9990, "currency": "USD", "storefront": "USA"]
            var renewal = first
            renewal["transactionId"] = String(otid.dropLast()) + "1"
            renewal["purchaseDate"] = renewed
            renewal["signedDate"] = renewed
            renewal["transactionReason"] = "RENEWAL"
            if otid.hasSuffix("10") {
                renewal.merge(["offerType": 5, "offerIdentifier": "stay3", "offerDiscountType": "FREE_TRIAL", "offerPeriod": "P3M",
                               "price": 0, "expiresDate": renewed + 90 * day]) { $1 }
            } else {
                renewal["expiresDate"] = renewed + 30 * day
            }
            bodies += try FidelityCLITests.signedBody(type: "SUBSCRIBED", uuid: "subscribed-\(otid)", transaction: first) + Data("\n".utf8)
            bodies += try FidelityCLITests.signedBody(type: "DID_RENEW", uuid: "renew-\(otid)", transaction: renewal) + Data("\n".utf8)
        }
        let ingested = try run(["ingest", "--db", db] + FidelityCLITests.policyFlags + ["-"], stdin: bodies)
        XCTAssertEqual(ingested.status, 0, ingested.stderr)
        let month = DateText.format(start, "yyyy-MM", zone: TimeZone(identifier: "UTC")!)
        func report(_ args: [String]) throws -> [String: Any] {
            let r = try run(["cohorts", "--db", db, "--json", "--from", month] + args)
            XCTAssertEqual(r.status, 0, r.stderr)
            return try XCTUnwrap(try json(r.stdout) as? [String: Any], r.stdout)
        }
        let saved = try report(["--where", "saved=retention"])
        XCTAssertEqual(saved["where"] as? [String], ["saved=retention"])
        let cohorts = try XCTUnwrap(saved["cohorts"] as? [[String: Any]])
        XCTAssertEqual(cohorts.map { "\($0["cohort"] ?? "") \($0["size"] ?? "")" }, ["\(month) 1"])
        // Saved at its first renewal, so still in its first run at period 1.
        let cells = try XCTUnwrap(cohorts.first?["cells"] as? [Any])
        XCTAssertEqual((cells.dropFirst().first as? [String: Any])?["count"] as? Int, 1, "\(cells)")
        let bySaved = try XCTUnwrap(try report(["--by", "saved"])["cohorts"] as? [[String: Any]])
        XCTAssertEqual(bySaved.map { "\($0["value"] ?? "") \($0["size"] ?? "")" }, ["none 1", "retention 1"])
        // A real-time save is a value subdesk knows, though nothing records one yet.
        XCTAssertEqual((try report(["--where", "saved=realtime"])["cohorts"] as? [Any])?.count, 0)
        for (args, says) in [(["--where", "saved=maybe"], "saved is retention, realtime or none, not maybe"),
                             (["--where", "offer=retention"], "no cohort has offer retention")] {
            let refused = try run(["cohorts", "--db", db, "--from", month] + args)
            XCTAssertEqual(refused.status, 2, "\(args): \(refused.stdout)")
            XCTAssertTrue(refused.stderr.contains(says), "\(args): \(refused.stderr)")
        }
    }
}
