import Foundation
import XCTest
import SubscriptionCore
@testable import SubdeskScenarios
import SubdeskTestKit

/// `serve` logs each real-time retention decision after answering, those waiting written
/// together: a SIGHUP reload and a clean stop (SIGTERM) write the decisions still waiting
/// instead of dropping them. The store's write lock is held by another connection while the
/// requests are answered, so that every decision is still waiting when the signal comes.
final class ServeRetentionReloadTests: SubdeskTestCase {
    var server: ServeProcess?

    override func tearDownWithError() throws {
        server?.stop()
        try super.tearDownWithError()
    }

    /// Holds the store's write lock from another connection for `seconds`, on a thread of its own.
    func holdWriteLock(_ db: String, seconds: TimeInterval) throws -> (started: DispatchSemaphore, done: DispatchSemaphore) {
        let store = try Store(path: db)
        let (started, done) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let thread = Thread {
            _ = try? store.write { started.signal(); Thread.sleep(forTimeInterval: seconds) }
            done.signal()
        }
        thread.start()
        XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
        return (started, done)
    }

    func decisions(_ db: String, atLeast count: Int) throws -> Int {
        let deadline = Date().addingTimeInterval(15)
        var stored = 0
        repeat {
            stored = Int(try engineQuery(db, "SELECT count(*) FROM retention_decisions")) ?? -1
            if stored >= count { break }
            usleep(50_000)
        } while Date() < deadline
        return stored
    }

    func testDecisionsWaitingAreWrittenOnReloadAndOnStop() throws {
        let db = dir + "/store.db"
        XCTAssertEqual(try run(["init", "--db", db]).status, 0)
        let socket = dir + "/serve.sock", rules = dir + "/retention.rules", config = dir + "/subdesk.conf"
        try "rule everyone: locale=en-US -> message=m-en\n".write(toFile: rules, atomically: true, encoding: .utf8)
        try """
        db = \(db)
        root_ca = \(HardeningTests.root)
        serve_socket = \(socket)
        [app demo]
        bundle_id = \(ScenarioBuilder.demoBundleId)
        app_apple_id = \(ScenarioBuilder.demoAppAppleId)
        retention_rules = \(rules)

        """.write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o600)
        var environment = ProcessInfo.processInfo.environment
        environment["SUBDESK_CONFIG"] = config
        environment["XDG_DATA_HOME"] = dir + "/data"
        environment.removeValue(forKey: "SUBDESK_DB")
        let serve = try ServeProcess(binary: Self.binary, arguments: ["--db", db], socket: socket, log: dir + "/serve.log", environment: environment)
        server = serve
        try serve.waitUntilAnswering()

        func answerRequests(_ count: Int, from first: Int) throws {
            let client = try FastCGITestClient(socket: socket)
            for index in first..<(first + count) {
                let body = try ServeRetentionTests.request(otid: String(2_000_000_900_000_000 + index))
                let answer = try XCTUnwrap(client.post(body, params: ServeRetentionTests.retentionParams(body)), serve.log)
                XCTAssertEqual(answer.status, 200, serve.log)
                XCTAssertTrue(answer.text.contains("m-en"), answer.text)
            }
        }

        // Answered while the store is locked, then a reload: every decision is written once the lock goes.
        let first = try holdWriteLock(db, seconds: 2)
        try answerRequests(12, from: 0)
        serve.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(30)
        while !serve.log.contains("reloaded") && Date() < deadline { usleep(20_000) }
        XCTAssertTrue(serve.log.contains("reloaded"), serve.log)
        XCTAssertEqual(first.done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(try decisions(db, atLeast: 12), 12, serve.log)

        // Answered while locked, then a clean stop: serve exits once they are written.
        let second = try holdWriteLock(db, seconds: 2)
        try answerRequests(12, from: 100)
        serve.signal(SIGTERM)
        XCTAssertEqual(serve.waitForExit(timeout: 60), 0, serve.log)
        XCTAssertEqual(second.done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(try engineQuery(db, "SELECT count(*) FROM retention_decisions"), "24", serve.log)
        XCTAssertEqual(try engineQuery(db, "SELECT count(DISTINCT original_transaction_id) FROM retention_decisions"), "24")
        XCTAssertFalse(serve.log.contains("not logged"), serve.log)
    }
}
