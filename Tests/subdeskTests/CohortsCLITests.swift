import Foundation
@testable import SubscriptionCore
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
        // No real-time request was answered: no cohort saved in real time, and no refusal.
        XCTAssertEqual((try report(["--where", "saved=realtime"])["cohorts"] as? [Any])?.count, 0)
        for (args, says) in [(["--where", "saved=maybe"], "saved is retention, realtime or none, not maybe"),
                             (["--where", "offer=retention"], "no cohort has offer retention")] {
            let refused = try run(["cohorts", "--db", db, "--from", month] + args)
            XCTAssertEqual(refused.status, 2, "\(args): \(refused.stdout)")
            XCTAssertTrue(refused.stderr.contains(says), "\(args): \(refused.stderr)")
        }
    }

    /// A real-time request the responder answered with an alternate product, followed by the
    /// notification that the plan was switched to it, is saved in `counts` and puts its
    /// subscription under `cohorts --where saved=realtime`; one answered with a message and
    /// followed by auto-renew turned off is not; the decision alone counts nothing.
    func testAnAnsweredRealtimeRequestTakenIsSavedInTheCountsAndTheCohorts() throws {
        let db = Store.testLocation(file: dir + "/realtime.db")
        let now = DateText.nowMillis(), day: Int64 = 86_400_000, hour: Int64 = 3_600_000
        let start = now - 20 * day, asked = now - 3 * hour
        let utc = TimeZone(identifier: "UTC")!
        func transaction(_ otid: String) -> [String: Any] {
            ["transactionId": otid, "originalTransactionId": otid, "productId": "app.monthly", "bundleId": ScenarioBuilder.demoBundleId,
             "purchaseDate": start, "originalPurchaseDate": start, "expiresDate": start + 30 * day, "signedDate": start,
             "environment": "Production", "inAppOwnershipType": "PURCHASED", "type": "Auto-Renewable Subscription",
             "transactionReason": "PURCHASE", "price": 9990, "currency": "USD", "storefront": "USA"]
        }
        func renewal(_ otid: String, on: Bool, product: String) -> [String: Any] {
            ["originalTransactionId": otid, "productId": "app.monthly", "autoRenewProductId": product, "autoRenewStatus": on ? 1 : 0,
             "signedDate": now, "environment": "Production", "renewalDate": start + 30 * day]
        }
        let (switched, cancelled) = ("5400000000000010", "5400000000000020")
        var bodies = Data()
        for otid in [switched, cancelled] {
            bodies += try FidelityCLITests.signedBody(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "subscribed-\(otid)",
                                                      transaction: transaction(otid), renewal: renewal(otid, on: true, product: "app.monthly"))
            bodies += Data("\n".utf8)
        }
        let ingested = try run(["ingest", "--db", db] + FidelityCLITests.policyFlags + ["-"], stdin: bodies)
        XCTAssertEqual(ingested.status, 0, ingested.stderr)
        // The responder's decisions, as serve logs them.
        let store = try Store(path: db)
        for (k, otid, answer, answered) in [(1, switched, RetentionAnswer.alternateProduct(productId: "app.yearly", billingPlanType: nil, messageId: nil), true),
                                           (2, switched, .message(id: "later"), false),
                                           (3, cancelled, .message(id: "stay"), true)] {
            var decision = RetentionDecision(response: RetentionResponse(
                status: 200, body: "{}", outcome: answered ? .answered(rule: "r\(k)", answer: answer) : .fellBack(.noRule, rule: nil)),
                                             decidedMs: asked + Int64(k) * 60_000, micros: 800)
            (decision.requestId, decision.originalTransactionId) = ("request-\(k)", otid)
            try store.retention.decisions.record(decision)
        }
        let range = ["--from", DateText.format(start, "yyyy-MM-dd", zone: utc), "--to", DateText.format(now, "yyyy-MM-dd", zone: utc)]
        func saved() throws -> Int {
            let r = try run(["counts", "--db", db, "--json", "--tz", "UTC"] + range)
            XCTAssertEqual(r.status, 0, r.stderr)
            let days = try XCTUnwrap(try json(r.stdout) as? [[String: Any]], r.stdout)
            return days.reduce(0) { $0 + ($1["saved"] as? Int ?? 0) }
        }
        XCTAssertEqual(try saved(), 0, "a decision alone is no save")
        // The evidence: the plan switched to the answered product, and auto-renew turned off.
        let evidence = try FidelityCLITests.signedBody(type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", uuid: "switched",
                                                       transaction: transaction(switched), renewal: renewal(switched, on: true, product: "app.yearly"))
            + Data("\n".utf8)
            + FidelityCLITests.signedBody(type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", uuid: "cancelled",
                                          transaction: transaction(cancelled), renewal: renewal(cancelled, on: false, product: "app.monthly"))
        let later = try run(["ingest", "--db", db] + FidelityCLITests.policyFlags + ["-"], stdin: evidence)
        XCTAssertEqual(later.status, 0, later.stderr)
        XCTAssertEqual(try saved(), 1)
        let month = DateText.format(start, "yyyy-MM", zone: utc)
        func report(_ args: [String]) throws -> [[String: Any]] {
            let r = try run(["cohorts", "--db", db, "--json", "--from", month] + args)
            XCTAssertEqual(r.status, 0, r.stderr)
            return try XCTUnwrap((try json(r.stdout) as? [String: Any])?["cohorts"] as? [[String: Any]], r.stdout)
        }
        XCTAssertEqual(try report(["--where", "saved=realtime"]).map { "\($0["cohort"] ?? "") \($0["size"] ?? "")" }, ["\(month) 1"])
        XCTAssertEqual(try report(["--by", "saved"]).map { "\($0["value"] ?? "") \($0["size"] ?? "")" }, ["none 1", "realtime 1"])
        let text = try run(["cohorts", "--db", db, "--from", month, "--where", "saved=realtime"])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("100.0%"), text.stdout)
    }
}
