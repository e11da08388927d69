import Foundation
import SubscriptionCore
import TerminalUI

/// `subdesk retention images|messages|default|realtime-url|performance-test|coverage`: the
/// console over Apple's Retention Messaging API, per app and environment.
enum RetentionConsoleCommand {
    static let forms = ["images", "messages", "default", "realtime-url", "performance-test", "coverage"]

    static func run(_ form: String, _ context: Context) throws -> Int32 {
        let p = Array(context.arguments.positionals.dropFirst())
        do {
            switch form {
            case "coverage": return try coverage(context)
            case "images": return try images(p, context)
            case "messages": return try messages(p, context)
            case "default": return try defaults(p, context)
            case "realtime-url": return try realtimeURL(p, context)
            case "performance-test": return try performanceTest(p, context)
            default: throw UsageError("unknown retention form \(SafeText.sanitize(form))")
            }
        } catch let refusal as RetentionContentError {
            if context.wantsJSON { Output.json(["error": refusal.description]) }
            Output.error(SafeText.sanitize(refusal.description) + "; nothing was sent to Apple")
            return 2
        } catch let unanswered as RetentionMessagingClient.Unanswered {
            Output.error(SafeText.sanitize(unanswered.description))
            return 1
        } catch let error as RevalidationError {
            if context.wantsJSON { Output.json(["error": error.description]) }
            Output.error(SafeText.sanitize(error.description))
            return 1
        } catch let error as StoreError where error.denial != nil {
            // The command's own store action is the report import's; the console writes retention_content.
            let write = StoreWrite.retentionConsole
            let message = error.denial!.explain(doing: write.words, needs: (write.privilege, write.table))
            Output.error(message)
            if context.wantsJSON { Output.json(["error": message, "exitCode": 1]) }
            return 1
        }
    }

    static func environment(_ context: Context, default fallback: AppStoreEnvironment = .production) throws -> AppStoreEnvironment {
        guard let text = context.arguments.value(.environment) else { return fallback }
        switch text.lowercased() {
        case "production": return .production
        case "sandbox": return .sandbox
        default: throw UsageError("--environment takes Production or Sandbox, got \(SafeText.sanitize(text))")
        }
    }

    /// The console for the app `--app` names (the only app without it), in `environment`.
    static func console(_ context: Context, environment: AppStoreEnvironment) throws -> RetentionConsole {
        let policy = try context.intakePolicy()
        let configuration = try context.revalidationConfiguration(policy: policy)
        let apps = try context.configuredApps()
        var bundleId: String?
        if apps.apps.count > 1 {
            guard let name = context.arguments.value(.app) else {
                throw UsageError("several apps are configured: name one with --app (\(apps.apps.map(\.name).joined(separator: ", ")))")
            }
            guard let app = apps.app(named: name), let id = app.bundleId else { throw UsageError("no configured app \(SafeText.sanitize(name))") }
            bundleId = id
        }
        guard let key = RetentionConsole.apiKey(configuration, severalApps: apps.apps.count > 1, bundleId: bundleId) else {
            throw UsageError(RevalidationError.needsServerAPI(action: ServerAPIAction.retentionMessaging, place: configuration.keyPlace).description)
        }
        var notice: (@Sendable (HTTPRetryNotice) -> Void)? = nil
        if !context.arguments.has(.quiet) {
            notice = { (n: HTTPRetryNotice) -> Void in
                let line = "subdesk: " + SafeText.sanitize(n.description) + "\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
        let client: RetentionMessagingClient = try context.wrap {
            try RetentionMessagingClient(key: key, endpoints: configuration.endpoints, environment: environment, policy: configuration.http,
                                         onRetry: notice)
        }
        return RetentionConsole(store: try context.openStore(mode: .existing), client: client, operatorName: context.operatorName)
    }

    static func done(_ entry: AuditEntry, _ what: String, _ context: Context, extra: [String: Any] = [:]) -> Int32 {
        if context.wantsJSON {
            Output.json(extra.merging(["done": what, "auditId": entry.id, "operator": entry.operatorName, "outcome": entry.outcome]) { $1 })
        } else {
            Output.line(SafeText.sanitize("\(what): \(entry.outcome) by \(entry.operatorName) (audit #\(entry.id))"))
        }
        return 0
    }

    static func uploadWords(_ outcome: RetentionConsole.UploadOutcome) -> String {
        switch outcome {
        case .uploaded: return "uploaded, PENDING Apple's review"
        case .foundAfterTimeout(let state): return "an attempt got no answer; Apple's list shows it (\(state)), so it was not uploaded again"
        }
    }

    static func images(_ p: [String], _ context: Context) throws -> Int32 {
        let reason = context.arguments.value(.reason)
        switch p.first {
        case nil:
            return try list(.image, try console(context, environment: try environment(context)), context)
        case "upload":
            guard p.count == 2 else { throw UsageError("retention images upload takes one FILE (a PNG)") }
            guard let id = context.arguments.value(.id) else { throw UsageError("retention images upload needs --id UUID") }
            guard let kindText = context.arguments.value(.kind), let kind = RetentionImageKind(rawValue: kindText.uppercased()) else {
                throw UsageError("retention images upload needs --kind FULL_SIZE or BULLET_POINT")
            }
            let attributes = try? FileManager.default.attributesOfItem(atPath: p[1])
            guard let size = attributes?[.size] as? Int, size <= RetentionPNG.maxBytes,
                  let png = FileManager.default.contents(atPath: p[1]) else {
                throw UsageError("cannot read \(SafeText.sanitize(p[1])) (or it is more than \(RetentionPNG.maxBytes) bytes)")
            }
            // Checked before any call (and before the key is read).
            _ = try RetentionText.identifier(id, field: "image id")
            try RetentionPNG(png).check(as: kind)
            let (outcome, entry) = try console(context, environment: try environment(context)).uploadImage(id: id, kind: kind, png: png, reason: reason)
            return done(entry, "image \(id.lowercased()) " + uploadWords(outcome), context)
        case "delete":
            return try delete(.image, p, context)
        default:
            throw UsageError("unknown retention images action \(SafeText.sanitize(p[0])) (upload FILE, delete ID)")
        }
    }

    static func message(_ context: Context) throws -> RetentionMessage {
        let a = context.arguments
        guard let header = a.value(.header), let body = a.value(.body) else { throw UsageError("retention messages upload needs --header TEXT and --body TEXT") }
        var picture: RetentionMessage.Picture?
        if let image = a.value(.image) {
            guard let alt = a.value(.alt) else { throw UsageError("--image needs --alt TEXT (the image's alternative text)") }
            picture = RetentionMessage.Picture(imageId: image, altText: alt)
        } else if a.value(.alt) != nil {
            throw UsageError("--alt describes --image: give both")
        }
        let texts = a.values(.bullet), images = a.values(.bulletImage), alts = a.values(.bulletAlt)
        guard images.count == texts.count, alts.count == texts.count else {
            throw UsageError("each --bullet needs its --bullet-image ID and --bullet-alt TEXT, in the same order (got \(texts.count), \(images.count), \(alts.count))")
        }
        let bullets = texts.indices.map { RetentionMessage.Bullet(text: texts[$0], imageId: images[$0], altText: alts[$0]) }
        var position: RetentionHeaderPosition?
        if let text = a.value(.headerPosition) {
            guard let p = RetentionHeaderPosition(rawValue: text.uppercased()) else { throw UsageError("--header-position takes ABOVE_BODY or ABOVE_IMAGE") }
            position = p
        }
        return try RetentionMessage(header: header, body: body, image: picture, bullets: bullets, headerPosition: position)
    }

    static func messages(_ p: [String], _ context: Context) throws -> Int32 {
        let reason = context.arguments.value(.reason)
        switch p.first {
        case nil:
            return try list(.message, try console(context, environment: try environment(context)), context)
        case "upload":
            guard p.count == 1 else { throw UsageError("retention messages upload takes no positional argument") }
            guard let id = context.arguments.value(.id) else { throw UsageError("retention messages upload needs --id UUID") }
            _ = try RetentionText.identifier(id, field: "message id")
            let m = try message(context)
            let (outcome, entry) = try console(context, environment: try environment(context)).uploadMessage(id: id, message: m, reason: reason)
            return done(entry, "message \(id.lowercased()) " + uploadWords(outcome), context)
        case "delete":
            return try delete(.message, p, context)
        default:
            throw UsageError("unknown retention messages action \(SafeText.sanitize(p[0])) (upload, delete ID)")
        }
    }

    /// `images delete ID` and `messages delete ID`: the identifier checked before any call.
    static func delete(_ kind: RetentionRecord.Kind, _ p: [String], _ context: Context) throws -> Int32 {
        let noun = kind.rawValue
        guard p.count == 2 else { throw UsageError("retention \(noun)s delete takes one ID") }
        _ = try RetentionText.identifier(p[1], field: "\(noun) id")
        let console = try console(context, environment: try environment(context))
        let reason = context.arguments.value(.reason)
        let entry = kind == .image ? try console.deleteImage(id: p[1], reason: reason) : try console.deleteMessage(id: p[1], reason: reason)
        return done(entry, "\(noun) \(p[1].lowercased()) deleted", context)
    }

    /// Apple's list beside the store's records, with their review states and differences.
    static func list(_ kind: RetentionRecord.Kind, _ console: RetentionConsole, _ context: Context) throws -> Int32 {
        let rows = try console.compare(kind)
        if context.wantsJSON {
            Output.json([kind == .image ? "images" : "messages": rows.map { r -> [String: Any] in
                ["identifier": r.identifier, "appleState": r.appleState as Any? ?? NSNull(), "storedState": r.keptState as Any? ?? NSNull(),
                 "summary": r.summary as Any? ?? NSNull(), "difference": r.difference.rawValue]
            }])
            return 0
        }
        guard !rows.isEmpty else {
            Output.line("no \(kind.rawValue)s at Apple (\(console.client.environment)) or in the store")
            return 0
        }
        Output.line("ID                                    APPLE     STORED    DIFFERENCE         SUMMARY")
        for r in rows {
            let cells = [r.identifier.padding(toLength: 36, withPad: " ", startingAt: 0), (r.appleState ?? "-").padding(toLength: 8, withPad: " ", startingAt: 0),
                         (r.keptState ?? "-").padding(toLength: 8, withPad: " ", startingAt: 0), r.difference.rawValue.padding(toLength: 17, withPad: " ", startingAt: 0),
                         r.summary ?? ""]
            Output.line(SafeText.sanitize(cells.joined(separator: "  ")))
        }
        return 0
    }

    static func defaults(_ p: [String], _ context: Context) throws -> Int32 {
        let reason = context.arguments.value(.reason)
        switch p.first {
        case "set":
            guard p.count == 4 else { throw UsageError("retention default set takes PRODUCT LOCALE MESSAGE_ID") }
            _ = (try RetentionText.productId(p[1]), try RetentionText.locale(p[2]), try RetentionText.identifier(p[3], field: "message id"))
            let entry = try console(context, environment: try environment(context)).setDefault(product: p[1], locale: p[2], messageId: p[3], reason: reason)
            return done(entry, "default message of \(p[1]) in \(p[2]) set to \(p[3].lowercased())", context)
        case "delete":
            guard p.count == 3 else { throw UsageError("retention default delete takes PRODUCT LOCALE") }
            _ = (try RetentionText.productId(p[1]), try RetentionText.locale(p[2]))
            let entry = try console(context, environment: try environment(context)).deleteDefault(product: p[1], locale: p[2], reason: reason)
            return done(entry, "default message of \(p[1]) in \(p[2]) deleted", context)
        case nil:
            throw UsageError("retention default takes PRODUCT LOCALE to read one, or set / delete")
        default:
            guard p.count == 2 else { throw UsageError("retention default PRODUCT LOCALE reads one default message") }
            _ = (try RetentionText.productId(p[0]), try RetentionText.locale(p[1]))
            let id = try console(context, environment: try environment(context)).client.defaultMessage(product: p[0], locale: p[1])
            if context.wantsJSON { Output.json(["product": p[0], "locale": p[1], "messageIdentifier": id as Any? ?? NSNull()]) }
            else { Output.line(SafeText.sanitize("\(p[0]) \(p[1]): " + (id.map { "default message \($0)" } ?? "no default message"))) }
            return 0
        }
    }

    static func realtimeURL(_ p: [String], _ context: Context) throws -> Int32 {
        let reason = context.arguments.value(.reason)
        switch p.first {
        case nil:
            let env = try environment(context)
            let url = try console(context, environment: env).client.realtimeURL()
            if context.wantsJSON { Output.json(["environment": env.rawValue, "realtimeURL": url as Any? ?? NSNull()]) }
            else { Output.line(SafeText.sanitize("\(env): " + (url ?? "no real-time URL"))) }
            return 0
        case "set":
            guard p.count == 2 else { throw UsageError("retention realtime-url set takes one URL") }
            guard context.arguments.value(.environment) != nil else { throw UsageError("retention realtime-url set needs --environment Production|Sandbox") }
            _ = try RetentionText.realtimeURL(p[1])
            return done(try console(context, environment: try environment(context)).setRealtimeURL(p[1], reason: reason), "real-time URL set", context)
        case "delete":
            guard context.arguments.value(.environment) != nil else { throw UsageError("retention realtime-url delete needs --environment Production|Sandbox") }
            return done(try console(context, environment: try environment(context)).deleteRealtimeURL(reason: reason), "real-time URL deleted", context)
        default:
            throw UsageError("unknown retention realtime-url action \(SafeText.sanitize(p[0])) (set URL, delete)")
        }
    }

    static func performanceTest(_ p: [String], _ context: Context) throws -> Int32 {
        guard p.isEmpty else { throw UsageError("retention performance-test takes --transaction ID or --request ID") }
        let wait = try context.arguments.value(.wait).map { text -> TimeInterval in
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds <= 3600 else { throw UsageError("--wait must be 0 to 3600 seconds, got \(SafeText.sanitize(text))") }
            return seconds
        } ?? 60
        let console = try console(context, environment: .sandbox)
        var requestId = context.arguments.value(.request)
        if requestId == nil {
            guard let transaction = context.arguments.value(.transaction) else {
                throw UsageError("retention performance-test needs --transaction ID (an active sandbox subscription's original transaction id), or --request ID")
            }
            requestId = try console.startPerformanceTest(originalTransactionId: transaction, reason: context.arguments.value(.reason)).requestId
            if !context.wantsJSON { Output.line("performance test \(requestId!) started (sandbox)") }
        }
        let id = try RetentionText.identifier(requestId!, field: "request id")
        let result = try console.followPerformanceTest(requestId: id, wait: wait)
        if context.wantsJSON {
            Output.json(["requestId": id, "result": result.result, "successRate": result.successRate as Any? ?? NSNull(),
                         "numPending": result.numPending as Any? ?? NSNull(), "responseTimes": result.responseTimes, "failures": result.failures,
                         "config": result.config, "target": result.target as Any? ?? NSNull()])
        } else {
            result.summaryLines.forEach { Output.line(SafeText.sanitize($0)) }
            if result.isPending { Output.line("still PENDING after \(Int(wait)) s: follow it with --request \(id)") }
        }
        return result.verdict == .fail ? 1 : 0
    }

    /// For each app, product and locale the store knows, which layer answers the cancel sheet.
    static func coverage(_ context: Context) throws -> Int32 {
        let store = try context.openStore(mode: .reading)
        let rows = try context.retentionCoverage(store: store, locales: context.arguments.values(.locale), scope: try context.appScope()?.bundleId)
        let gaps = rows.filter { $0.layer == .nothing }.count
        if context.wantsJSON {
            Output.json(["rows": rows.map { ["app": $0.app, "product": $0.product, "locale": $0.locale as Any? ?? NSNull(), "layer": $0.layer.rawValue,
                                             "messageIdentifier": $0.messageId as Any? ?? NSNull(), "environment": $0.environment as Any? ?? NSNull(),
                                             "rule": $0.rule as Any? ?? NSNull()] },
                         "gaps": gaps])
            return 0
        }
        Output.line("which layer answers the cancel sheet: real-time rules (retention_rules), App Store Connect as declared "
                    + "(retention_app_store_connect), the API default message")
        for r in rows {
            let what = r.messageId.map { " \($0) (\(r.environment ?? "?"))" } ?? r.rule.map { " \($0)" } ?? ""
            Output.line(SafeText.sanitize("\(r.app.isEmpty ? "-" : r.app)  \(r.product)  \(r.locale ?? "(no locale known)")  \(r.layer.rawValue)" + what))
        }
        Output.line("\(gaps) gap\(gaps == 1 ? "" : "s") (a product and locale no layer answers)")
        return 0
    }
}
