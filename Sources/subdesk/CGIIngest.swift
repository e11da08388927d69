import Foundation
import SubscriptionCore

/// `subdesk ingest --cgi`: one notification per request, answered per CGI/1.1.
enum CGIIngest {
    static func run(_ context: Context) -> Int32 {
        let limit = (try? context.intakePolicy().maxBodyBytes) ?? IntakePolicy().maxBodyBytes
        let answer = WebhookAnswer.answer(params: context.environment, readBody: { expected in
            BodyReader.read(fd: STDIN_FILENO, expected: expected, limit: limit)
        }, store: { read, source, app in
            let store = try context.openStore(mode: .existing)
            try store.upkeep.configureForOneShotWrites()
            try store.upkeep.boundServerWaitsForIntake()
            defer { store.upkeep.finishOneShotWrites() }
            return try context.makeIntake(store: store).ingest(read, source: source, postedFor: app)
        }, log: { Output.error($0) })
        return respond(answer)
    }

    static func respond(_ answer: WebhookAnswer) -> Int32 {
        FileHandle.standardOutput.write(Data(answer.cgiText.utf8))
        return answer.status < 300 ? 0 : 1
    }
}
