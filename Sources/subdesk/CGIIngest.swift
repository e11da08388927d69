import Foundation
import SubscriptionCore
import TerminalUI

/// `subdesk ingest --cgi`: one notification per request, answered per CGI/1.1.
enum CGIIngest {
    /// `body` goes back to whoever posted, and into web server logs: what it quotes from a
    /// request (a V1 `notification_type`, say) is escaped by the caller, so no ESC, BEL,
    /// line break or bidi override reaches them raw.
    static func respond(_ status: Int, _ reason: String, _ body: String) -> Int32 {
        let text = "Status: \(status) \(reason)\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n\(body)\n"
        FileHandle.standardOutput.write(Data(text.utf8))
        return status < 300 ? 0 : 1
    }

    /// 503, so Apple retries. The detail (paths, SQL) goes to the operator's log on stderr,
    /// never to the HTTP client.
    static func respondUnavailable() -> Int32 {
        respond(503, "Service Unavailable", "temporarily unavailable: not stored, retry later")
    }

    static func run(_ context: Context) -> Int32 {
        let env = context.environment
        let method = env["REQUEST_METHOD"] ?? "POST"
        guard method == "POST" else {
            return respond(405, "Method Not Allowed", "notifications are POSTed")
        }
        var expected: Int?
        if let lengthText = env["CONTENT_LENGTH"], !lengthText.isEmpty {
            guard let length = Int(lengthText), length >= 0 else {
                return respond(400, "Bad Request", "CONTENT_LENGTH \(lengthText) is not a length")
            }
            expected = length
        }
        let limit = (try? context.intakePolicy().maxBodyBytes) ?? IntakePolicy().maxBodyBytes
        let read = BodyReader.read(fd: STDIN_FILENO, expected: expected, limit: limit)
        if let expected, read.length < expected, !read.stoppedAtCap {
            // A connection fault, not a body: nothing of it is kept, and the sender retries.
            Output.error("request body ended after \(read.length) of \(expected) bytes (CONTENT_LENGTH); not stored")
            return respondUnavailable()
        }
        do {
            let store = try context.openStore(mode: .existing)
            try store.configureForOneShotWrites()
            try store.boundServerWaitsForIntake()
            defer { store.finishOneShotWrites() }
            let intake = try context.makeIntake(store: store)
            let source = "cgi:" + (env["REMOTE_ADDR"] ?? "-")
            let outcome = read.isWhole ? try intake.ingest(read.kept, source: source)
                : try intake.rejectOversized(prefix: read.kept, trueLength: read.length, digest: read.digest, source: source)
            switch outcome {
            case .stored(let e): return respond(200, "OK", "stored \(SafeText.sanitize(e.notificationUUID))")
            case .duplicate(let uuid): return respond(200, "OK", "duplicate \(SafeText.sanitize(uuid))")
            case .rejected(let reason, let id):
                let status = reason.contains("over the") && reason.contains("byte limit") ? 413 : 400
                return respond(status, status == 413 ? "Payload Too Large" : "Bad Request",
                               "rejected (quarantine #\(id)): \(SafeText.sanitize(reason))")
            }
        } catch {
            Output.error("\(error)")
            return respondUnavailable()
        }
    }
}
