import Foundation
import XCTest
import SubdeskTestKit
@testable import SubscriptionCore
import SubdeskScenarios

/// The attack on remembered chain checks, run as an attacker with write access to the store
/// would run it: through the shipped lighttpd set-up, on SQLite (the row planted with
/// `sqlite3`) and on PostgreSQL (tried as a support login first, then planted as the owner).
extension WebServerTests {
    func testAChainRowPlantedInTheStoreDoesNotLetAForgedNotificationIn() async throws {
        database = Store.testLocation(file: database)
        let lighttpd = try Self.lighttpdExecutable()
        let port = try startServer(lighttpd)
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/appstore/notifications"))
        let postgres = PostgresLocation.isPostgres(database)

        // A genuine notification: stored, and the receiver remembers its chain, sealed.
        let good = try Self.signedBodies(count: 1)[0]
        let first = await Self.post([Request(body: good.body, kind: .good, uuid: good.uuid)], to: url, concurrency: 1,
                                    deadline: Date().addingTimeInterval(60))
        XCTAssertEqual(first.first??.status, 200, first.first??.text ?? "no answer")
        let hex = postgres ? "encode(roots_hash, 'hex') || ' ' || encode(seal, 'hex') || ' ' || subjects"
                           : "lower(hex(roots_hash)) || ' ' || lower(hex(seal)) || ' ' || subjects"
        let row = try engineQuery(database, "SELECT \(hex) FROM verified_chains")
        let fields = row.split(separator: " ", maxSplits: 2).map(String.init)
        XCTAssertEqual(fields.count, 3, "one remembered chain: \(row)")
        guard fields.count == 3 else { return }

        // The forger's own chain (root, intermediate and leaf with Apple's marker OIDs, under a
        // root no receiver trusts), planted as if it had been checked: the honest row's roots
        // column and seal, the forged chain's hash and cut, valid until 9999.
        let fixtures = Self.repoRoot + "/Tests/SubscriptionCoreTests/Fixtures/verification/other-ca/"
        let chain = try ["leaf.der", "intermediate.der", "root.der"].map { try Data(contentsOf: URL(fileURLWithPath: fixtures + $0)) }
        let forger = try JWSSigner(privateKeyPEM: try Data(contentsOf: URL(fileURLWithPath: fixtures + "leaf-key.pem")), chain: chain)
        let chainHash = ContentDigest.sha256Hex(chain.reduce(into: Data()) { $0 += $1 })
        let lengths = chain.map { String($0.count) }.joined(separator: ",")
        let bytes = { (hex: String) in postgres ? "decode('\(hex)', 'hex')" : "X'\(hex)'" }
        let plant = """
            INSERT INTO verified_chains (chain_hash, roots_hash, entry_lengths, subjects, valid_from_s, valid_until_s, checked_ms, seal)
            VALUES (\(bytes(chainHash)), \(bytes(fields[0])), '\(lengths)', '\(fields[2].replacingOccurrences(of: "'", with: "''"))',
                    0, 253402300799, 0, \(bytes(fields[1])))
            """
        if postgres {
            // A support login may not write the chain memory at all.
            let location = try PostgresLocation(database)
            _ = try engineQuery(database, PostgresRoles.sql(schema: try XCTUnwrap(location.schema)))
            let user = "forger_\(UUID().uuidString.prefix(8).lowercased())"
            _ = try engineQuery(database, "CREATE ROLE \(user) LOGIN IN ROLE subdesk_support")
            var login = try XCTUnwrap(URLComponents(string: location.conninfo))
            login.user = user
            let asSupport = try runToEnd("/usr/bin/env", ["psql", "-d", try XCTUnwrap(login.string), "-AtqX", "-v", "ON_ERROR_STOP=1",
                                                          "-c", "SET search_path TO \(location.schema!)", "-c", plant])
            XCTAssertNotEqual(asSupport.status, 0, "support planted a chain row")
            XCTAssertTrue(asSupport.output.contains("permission denied"), asSupport.output)
        }
        _ = try engineQuery(database, plant)
        XCTAssertEqual(try engineQuery(database, "SELECT count(*) FROM verified_chains"), "2")

        // The forged notification: refused as untrusted, quarantined with its reason, and
        // nothing of it reaches the subscriptions.
        let scenario = try XCTUnwrap(try Scenario.loadAll(directory: Self.repoRoot + "/sample-data/scenarios").first)
        let forged = try XCTUnwrap(try ScenarioBuilder(signer: forger).bodies(for: scenario, instance: 990_001, anchor: Self.anchor).first)
        let answer = await Self.post([Request(body: forged, kind: .bad, uuid: nil)], to: url, concurrency: 1,
                                     deadline: Date().addingTimeInterval(60))
        XCTAssertEqual(answer.first??.status, 400, answer.first??.text ?? "no answer")
        XCTAssertTrue(answer.first??.text.contains("does not lead to a configured root") == true, answer.first??.text ?? "")
        let quarantine = try Self.subdesk(["quarantine", "--db", database, "--json"])
        XCTAssertTrue(quarantine.contains("does not lead to a configured root"), quarantine)
        XCTAssertEqual(try engineQuery(database, "SELECT count(*) FROM notifications"), "1", "only the genuine notification is stored")
    }
}
