import Foundation
import XCTest
@testable import SubscriptionCore

/// The table of notification meanings is the one place a type's name decides anything.
final class NotificationMeaningTests: XCTestCase {
    static let sources = URL(fileURLWithPath: TestKit.repoRoot).appendingPathComponent("Sources")

    /// Where Apple's names may be spelled: the table, the typed names, and the demo's and
    /// generator's payloads (fixtures that write what Apple sends).
    static let spelledIn = ["SubscriptionCore/Domain/NotificationMeaning.swift", "SubscriptionCore/AppStore/NotificationType.swift",
                            "SubdeskScenarios/",
                            // A dictionary of byte strings common in payloads, to compress bodies.
                            "SubscriptionCore/Store/CompactBody.swift"]

    /// The same words meaning something else: (file, literal).
    static let otherMeanings: Set<[String]> = [
        ["SubscriptionCore/Domain/SubscriptionStatus.swift", "EXPIRED"],  // a status's label
        ["Dashboard/Render/SubscribersView.swift", "EXPIRED"],            // a status's label
        ["SubscriptionCore/Metrics/Metric.swift", "REFUND"],              // a column heading of counts
        ["SubscriptionCore/Domain/AppleTransactionValues.swift", "RENEWAL"], // a transactionReason
        ["SubscriptionCore/Relay/ForwardStatusText.swift", "PENDING"],    // a column heading of the relay's table
        // Apple's review state of retention messages and images, and of a performance test.
        ["SubscriptionCore/Revalidation/RetentionMessagingClient.swift", "PENDING"],
        ["subdesk/RetentionConsoleCommand.swift", "PENDING"],
        ["FakeApple/FakeRetentionMessaging.swift", "PENDING"],
    ]

    /// Every name the table knows, and every name the typed values declare.
    static func names() -> Set<String> {
        let table = NotificationMeanings.standard
        var names = Set(table.rows.map(\.type.rawValue) + table.subtypes.map(\.rawValue))
        names.formUnion(NotificationType.Name.allCases.map(\.rawValue) + NotificationSubtype.Name.allCases.map(\.rawValue))
        return names
    }

    /// A switch or comparison over a raw type name outside the table fails here: the name
    /// belongs in a row, and the code reads the row's facts.
    func testNoTypeOrSubtypeNameIsSpelledOutsideTheTable() throws {
        let names = Self.names()
        let literal = try NSRegularExpression(pattern: "\"([A-Z][A-Z_]+)\"")
        var found: [String] = []
        let files = FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil)!
        for case let url as URL in files where url.pathExtension == "swift" {
            let path = String(url.path.dropFirst(Self.sources.path.count + 1))
            if Self.spelledIn.contains(where: { path.hasPrefix($0) }) { continue }
            let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
            for (number, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                for match in literal.matches(in: line, range: NSRange(line.startIndex..., in: line)) {
                    let name = String(line[Range(match.range(at: 1), in: line)!])
                    if names.contains(name) && !Self.otherMeanings.contains([path, name]) {
                        found.append("\(path):\(number + 1): \"\(name)\"")
                    }
                }
            }
        }
        XCTAssertEqual(found, [], "read the row of NotificationMeanings.standard instead of spelling the name")
    }

    /// A type or subtype declared as a typed value has a row, or is named by one.
    func testEveryDeclaredTypeAndSubtypeIsInTheTable() throws {
        let table = NotificationMeanings.standard
        let types = Set(table.rows.map(\.type.rawValue)), subtypes = Set(table.subtypes.map(\.rawValue))
        XCTAssertEqual(Set(NotificationType.Name.allCases.map(\.rawValue)).subtracting(types), [])
        XCTAssertEqual(Set(NotificationSubtype.Name.allCases.map(\.rawValue)).subtracting(subtypes), [])
        XCTAssertEqual(NotificationV1.documentedTypes.count, 13, "the thirteen V1 names of Apple's documentation")
        for type in [NotificationType.metadataUpdate, .migration, .priceChange] {
            XCTAssertEqual(table[type, nil]?.effect, .noStateEffect, "\(type) is kept and shown, not modelled")
        }
    }

    /// A subtype without a row of its own means what its type's row says; a type the table
    /// does not know has no row (it is kept and shown as it came, and moves nothing).
    func testASubtypeWithoutARowFallsBackToItsType() {
        let table = NotificationMeanings.standard
        XCTAssertEqual(table[.didFailToRenew, .gracePeriod]?.effect.billing, .entersGrace)
        XCTAssertEqual(table[.didFailToRenew, NotificationSubtype(rawValue: "SOMETHING_NEW")]?.effect.billing, .entersRetry)
        XCTAssertEqual(table[.didFailToRenew, nil]?.effect.billing, .entersRetry)
        XCTAssertNil(table[NotificationType(rawValue: "SOMETHING_NEW"), nil])
        XCTAssertEqual(table.v1Rank(NotificationType(rawValue: "SOMETHING_NEW")), 1, "an unknown V1 name ranks as a change of preference")
        XCTAssertEqual(table.v1Rank(.cancel), 2)
        XCTAssertNil(table[.expired, nil]?.v1Rank, "EXPIRED is no V1 name")
    }

    /// V1 intake orders bodies about the same purchase by the rank the table gives the name.
    func testV1IntakeRanksANameByItsRow() throws {
        let name = NotificationType(rawValue: "ACCOUNT_HOLD")
        let json = try JSONFields(data: IntakeTests.v1Body(type: name.rawValue), path: "body")
        let plain = try NotificationV1(json: json)
        let ranked = try NotificationV1(json: json, meanings: NotificationMeanings.standard.adding(
            NotificationMeaning(name, "billing on hold", .v1(rank: 2), .init(billing: .entersRetry), tone: .billingRetry)))
        XCTAssertEqual(plain.transactions.map(\.notificationSignedDate), plain.transactions.map { _ in plain.versionDate + 1 },
                       "a name without a row ranks as a change of preference")
        XCTAssertEqual(ranked.transactions.map(\.notificationSignedDate), ranked.transactions.map { _ in ranked.versionDate + 2 })
        XCTAssertFalse(ranked.transactions.isEmpty)
    }

    /// The store's triggers open and close refund requests on the types whose rows say so
    /// (both engines' triggers are entries of the one migration list).
    func testTheRefundTriggersNameTheTypesTheTableGivesARefundStep() throws {
        let table = NotificationMeanings.standard
        for file in ["SubscriptionCore/Store/Migrations.swift"] {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            let named = try NSRegularExpression(pattern: "NEW\\.type (?:= '([A-Z_]+)'|IN \\(([^)]*)\\))")
            var opens = Set<String>(), closes = Set<String>()
            for m in named.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                if let r = Range(m.range(at: 1), in: text) { opens.insert(String(text[r])) }
                if let r = Range(m.range(at: 2), in: text) {
                    closes.formUnion(text[r].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " '")) })
                }
            }
            XCTAssertEqual(opens, Set(table.rows.filter { $0.effect.refund == .requested }.map(\.type.rawValue)), file)
            XCTAssertEqual(closes, Set(table.rows.filter { [.refunded, .declined].contains($0.effect.refund) }.map(\.type.rawValue)), file)
        }
    }
}
