import Foundation
import SubscriptionCore
import TerminalUI

/// What the notification URL answers one request, whoever carries it: `ingest --cgi` (one
/// process per request) and `serve` (FastCGI) both come here, so the same request gets
/// the same status and body from either.
struct WebhookAnswer: Equatable {
    let status: Int
    let reason: String
    /// Goes back to whoever posted, and into web server logs: what it quotes from a request
    /// (a V1 `notification_type`, say) is escaped, so no ESC, BEL, line break or bidi
    /// override reaches them raw.
    let body: String

    /// The CGI/1.1 response (also what a FastCGI responder writes on FCGI_STDOUT).
    var cgiText: String { "Status: \(status) \(reason)\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n\(body)\n" }

    /// 503, so Apple retries. The detail (paths, SQL) goes to the operator's log on stderr,
    /// never to the HTTP client.
    static let unavailable = WebhookAnswer(status: 503, reason: "Service Unavailable",
                                           body: "temporarily unavailable: not stored, retry later")

    /// How a body ended answers.
    init(_ outcome: IntakeOutcome) {
        switch outcome {
        case .stored(let e): self.init(status: 200, reason: "OK", body: "stored \(SafeText.sanitize(e.notificationUUID))")
        case .duplicate(let uuid): self.init(status: 200, reason: "OK", body: "duplicate \(SafeText.sanitize(uuid))")
        case .rejected(let refusal, let id):
            let tooLarge = refusal.kind == .oversized
            self.init(status: tooLarge ? 413 : 400, reason: tooLarge ? "Payload Too Large" : "Bad Request",
                      body: "rejected (quarantine #\(id)): \(SafeText.sanitize(refusal.description))")
        }
    }

    init(status: Int, reason: String, body: String) {
        self.status = status
        self.reason = reason
        self.body = body
    }

    /// Answers one request: `params` are its CGI variables, `readBody` reads its body given
    /// the length CONTENT_LENGTH promised, and `store` stores the body read whole (or refuses
    /// one over the limit) under its source. `log` hears what went wrong where the answer
    /// does not say it (the operator's log). A URL that names an app (`?app=NAME`, its name,
    /// bundle id or Apple ID) has `store` refuse a body signed for another app; one whose
    /// `?app=` is empty or given twice with different values has it quarantine the body.
    static func answer(params: [String: String], readBody: (_ expected: Int?) -> BodyReader.Result,
                       store: (_ body: BodyReader.Result, _ source: String, _ app: Result<String?, Refusal>) throws -> IntakeOutcome,
                       log: (String) -> Void) -> WebhookAnswer {
        let method = params["REQUEST_METHOD"] ?? "POST"
        guard method == "POST" else {
            return WebhookAnswer(status: 405, reason: "Method Not Allowed", body: "notifications are POSTed")
        }
        var expected: Int?
        if let lengthText = params["CONTENT_LENGTH"], !lengthText.isEmpty {
            guard let length = Int(lengthText), length >= 0 else {
                return WebhookAnswer(status: 400, reason: "Bad Request", body: "CONTENT_LENGTH \(SafeText.sanitize(lengthText)) is not a length")
            }
            expected = length
        }
        let read = readBody(expected)
        if let expected, read.length < expected, !read.stoppedAtCap {
            // A connection fault, not a body: nothing of it is kept, and the sender retries.
            log("request body ended after \(read.length) of \(expected) bytes (CONTENT_LENGTH); not stored")
            return unavailable
        }
        do {
            return WebhookAnswer(try store(read, "cgi:" + (params["REMOTE_ADDR"] ?? "-"), postedApp(params)))
        } catch {
            log("\(error)")
            return unavailable
        }
    }
}

extension WebhookAnswer {
    /// The app the request's URL names (`?app=NAME`), nil when it names none, or the
    /// refusal of a query that says no one app: an empty `?app=` (which would turn the check
    /// off), or `app=` given twice with different values (which would pick one silently).
    /// Read by hand: whatever the sender put in the query (`%zz`, spaces) is a name to look
    /// up, never something that stops the process (URLComponents traps on such text).
    static func postedApp(_ params: [String: String]) -> Result<String?, Refusal> {
        guard let query = params["QUERY_STRING"], !query.isEmpty else { return .success(nil) }
        let values = query.split(separator: "&").compactMap { pair -> String? in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0] == "app" else { return nil }
            let raw = parts.count == 2 ? String(parts[1]).replacingOccurrences(of: "+", with: " ") : ""
            return raw.removingPercentEncoding ?? raw
        }
        guard let first = values.first else { return .success(nil) }
        if let other = values.first(where: { $0 != first }) {
            return .failure(Refusal(.malformed, field: "?app", fault: "app= is given twice, as \(IntakePolicy.quotedApp(first)) "
                                    + "and as \(IntakePolicy.quotedApp(other)): name one app"))
        }
        if first.isEmpty {
            return .failure(Refusal(.malformed, field: "?app", fault: "app= is empty: name an app (its name, bundle id or Apple ID), or leave ?app= out"))
        }
        return .success(first)
    }
}

extension Intake {
    /// Stores a body read by `BodyReader`: the whole body through intake, one over the limit
    /// refused from its kept prefix.
    /// A URL's `?app=` that says no one app quarantines a whole body with its refusal.
    func ingest(_ read: BodyReader.Result, source: String, postedFor app: Result<String?, Refusal> = .success(nil)) throws -> IntakeOutcome {
        guard read.isWhole else { return try rejectOversized(prefix: read.kept, trueLength: read.length, digest: read.digest, source: source) }
        switch app {
        case .success(let app): return try ingest(read.kept, source: source, postedFor: app)
        case .failure(let refusal): return try commit(.refused(read.kept, source: source, refusal: refusal))
        }
    }
}
