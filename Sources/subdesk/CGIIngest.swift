import Foundation
import SubscriptionCore

/// `subdesk ingest --cgi`: one notification per request, answered per CGI/1.1.
enum CGIIngest {
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
        let body: Data
        if let lengthText = env["CONTENT_LENGTH"], !lengthText.isEmpty {
            guard let length = Int(lengthText), length >= 0 else {
                return respond(400, "Bad Request", "CONTENT_LENGTH \(lengthText) is not a length")
            }
            body = readExactly(length)
            guard body.count == length else {
                // The client went away mid-body: nothing to store, Apple will retry.
                return respond(400, "Bad Request", "body ended after \(body.count) of \(length) bytes")
            }
        } else {
            body = FileHandle.standardInput.readDataToEndOfFile()
        }
        do {
            let store = try context.openStore(mode: .existing)
            try store.configureForOneShotWrites()
            defer { store.finishOneShotWrites() }
            let intake = try context.makeIntake(store: store)
            switch try intake.ingest(body, source: "cgi:" + (env["REMOTE_ADDR"] ?? "-")) {
            case .stored(let e): return respond(200, "OK", "stored \(e.notificationUUID)")
            case .duplicate(let uuid): return respond(200, "OK", "duplicate \(uuid)")
            case .rejected(let reason, let id):
                let status = reason.contains("over the") && reason.contains("byte limit") ? 413 : 400
                return respond(status, status == 413 ? "Payload Too Large" : "Bad Request",
                               "rejected (quarantine #\(id)): \(reason.filter { $0 != "\r" && $0 != "\n" })")
            }
        } catch {
            Output.error("\(error)")
            return respondUnavailable()
        }
    }

    private static func readExactly(_ length: Int) -> Data {
        var data = Data()
        let input = FileHandle.standardInput
        while data.count < length {
            let chunk = input.readData(ofLength: length - data.count)
            if chunk.isEmpty { break }
            data.append(chunk)
        }
        return data
    }
}
