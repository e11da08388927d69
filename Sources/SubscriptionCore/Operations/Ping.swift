import Foundation

/// The on-call engineer's "is the webhook alive": asks Apple for a TEST notification and
/// waits until it has come through the real intake (web server, CGI, store), timing the
/// round trip; when it does not come in time, says what Apple reports of its attempts.
public final class Ping {
    public struct Result: Sendable {
        public var token: String
        public var requested: Millis
        /// The TEST notification as stored, when it arrived in time.
        public var arrivedUUID: String?
        public var arrived: Millis?
        /// Apple's delivery attempts, as Get Test Notification Status last said.
        public var attempts: [SendAttempt]

        public var roundTrip: Millis? { arrived.map { $0 - requested } }

        /// `TEST notification … arrived through intake 0.46 s after it was requested`, once it has.
        public var arrivalText: String? {
            guard let trip = roundTrip, let uuid = arrivedUUID else { return nil }
            return "TEST notification \(uuid) arrived through intake \(String(format: "%.2f", Double(trip) / 1000)) s after it was requested"
        }
    }

    let store: Store
    let client: AppStoreServerAPIClient
    let clock: () -> Millis
    let sleep: (TimeInterval) -> Void

    public init(store: Store, client: AppStoreServerAPIClient, clock: @escaping () -> Millis = DateText.nowMillis,
                sleep: @escaping (TimeInterval) -> Void = { Thread.sleep(forTimeInterval: $0) }) {
        self.store = store
        self.client = client
        self.clock = clock
        self.sleep = sleep
    }

    /// Requests the TEST notification and watches the store for it (every 50 ms) until
    /// `timeout` seconds pass. Only the notification Apple sent for this request counts:
    /// Get Test Notification Status (asked at once and every `statusEvery` seconds until it
    /// names one) gives its signed payload, and the store must hold that notificationUUID.
    /// A TEST notification that some other ping (or anyone) caused never answers this one.
    public func run(environment: AppStoreEnvironment, timeout: TimeInterval, statusEvery: TimeInterval = 2) throws -> Result {
        let requested = clock()
        let token = try client.requestTestNotification(environment: environment)
        var result = Result(token: token, requested: requested, arrivedUUID: nil, arrived: nil, attempts: [])
        let deadline = Date().addingTimeInterval(timeout)
        var nextStatus = Date()
        var expected: String?
        while true {
            if let expected, let received = try arrived(uuid: expected, requested: requested) {
                result.arrivedUUID = expected
                result.arrived = received
                if let status = try? client.testNotificationStatus(token: token, environment: environment) {
                    result.attempts = status.sendAttempts
                }
                return result
            }
            if Date() >= deadline { break }
            if Date() >= nextStatus {
                nextStatus = Date().addingTimeInterval(statusEvery)
                if let status = try? client.testNotificationStatus(token: token, environment: environment) {
                    result.attempts = status.sendAttempts
                    if expected == nil, let payload = status.signedPayload { expected = Ping.notificationUUID(of: payload) }
                    // Until Apple names it, look again soon: the status is the only proof.
                    if expected == nil { nextStatus = min(nextStatus, Date().addingTimeInterval(0.25)) }
                }
            }
            sleep(0.05)
        }
        result.attempts = (try? client.testNotificationStatus(token: token, environment: environment).sendAttempts) ?? result.attempts
        return result
    }

    /// When the TEST notification `uuid` was stored, if it has been. A receiver whose clock
    /// runs behind this host's can store it "before" it was requested: the round trip then
    /// counts from the request, never below zero.
    func arrived(uuid: String, requested: Millis) throws -> Millis? {
        guard let received = try store.notifications.received(uuid: uuid) else { return nil }
        return max(received, requested)
    }

    /// The notificationUUID in a JWS's payload, read without verifying it: it only says
    /// which stored notification to look for, and the stored one was verified by intake.
    static func notificationUUID(of jws: String) -> String? {
        guard let data = ApplePayloads.payload(ofJWS: jws), let json = try? JSONFields(data: data, path: "payload") else { return nil }
        return try? json.string("notificationUUID")
    }

    public static func describe(_ attempts: [SendAttempt]) -> String {
        attempts.isEmpty ? "no delivery attempts reported yet"
            : "\(attempts.count) attempt\(attempts.count == 1 ? "" : "s"): "
                + attempts.map { "\(DateText.second($0.date)) UTC \($0.result)" }.joined(separator: ", ")
    }
}
