import SubscriptionCore
import TerminalUI

/// The subscription detail: a header of facts support asks about, then the timeline.
enum DetailView {
    static func render(_ state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard let detail = state.detail else { return }
        let frame = area
        let inner = Box(title: "Subscription \(detail.originalTransactionId)").render(in: frame, buffer: &buffer)
        guard let content = detail.content else {
            let message = detail.missing ?? "loading…"
            buffer.put(message, x: inner.x + 1, y: inner.y, role: detail.missing == nil ? .dim : .error,
                       maxWidth: inner.width - 2)
            return
        }
        let text = inner.inset(left: 1, right: 1)
        let lines = headerLines(content, state: state, width: text.width)
        let headerLines = Layout.detailHeaderLines(detail)
        for (index, line) in lines.prefix(headerLines).enumerated() {
            draw(line, x: text.x, y: text.y + index, maxX: text.maxX, buffer: &buffer)
        }
        let dividerY = inner.y + headerLines
        Box.divider(title: "Timeline (\(state.time.label))", y: dividerY, in: frame, buffer: &buffer)
        let deliveryLines = Layout.detailDeliveryLines(detail, height: state.height)
        let timelineArea = Rect(x: text.x, y: dividerY + 1, width: text.width,
                                height: frame.maxY - 1 - (dividerY + 1) - deliveryLines)
        renderTimeline(detail, state: state, in: timelineArea, buffer: &buffer)
        if deliveryLines > 0 {
            let y = timelineArea.maxY
            let deliveries = content.deliveries
            let targets = Set(deliveries.map(\.target)).count
            Box.divider(title: "Deliveries (\(deliveries.count) to \(targets) target\(targets == 1 ? "" : "s"), \(state.time.label))",
                        y: y, in: frame, buffer: &buffer)
            renderDeliveries(deliveries, state: state, in: Rect(x: text.x, y: y + 1, width: text.width, height: deliveryLines - 1),
                             buffer: &buffer)
        }
    }

    /// A line a delivery of the subscription's notifications to a `[forward]` target, the
    /// newest last: target, type, state, attempts, when delivered, the last answer or error.
    /// When not all fit, the first line says how many earlier ones are left out.
    static func renderDeliveries(_ deliveries: [ForwardDelivery], state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard area.height > 0 else { return }
        let hidden = deliveries.count > area.height ? deliveries.count - area.height + 1 : 0
        var y = area.y
        if hidden > 0 {
            buffer.put("… \(hidden) earlier deliver\(hidden == 1 ? "y" : "ies") not shown", x: area.x, y: y, width: area.width,
                       alignment: .left, role: .dim)
            y += 1
        }
        let shown = Array(deliveries.suffix(deliveries.count - hidden))
        let targetWidth = min(16, shown.map { TextWidth.width(of: SafeText.sanitize($0.target)) }.max() ?? 0)
        let typeWidth = min(24, shown.map { TextWidth.width(of: SafeText.sanitize($0.type)) }.max() ?? 0)
        let columns = [TableColumn("TARGET", width: .fixed(targetWidth)), TableColumn("TYPE", width: .fixed(typeWidth)),
                       TableColumn("STATE", width: .fixed(9)), TableColumn("ATTEMPTS", width: .fixed(10)),
                       TableColumn("DELIVERED", width: .fixed(16)), TableColumn("LAST ANSWER", width: .flex(1))]
        let rows: [[TableCell]] = shown.map { d in
            let stateRole: StyleRole = d.state == .delivered ? .success : d.state == .dead ? .error : d.attempts > 0 ? .warning : .dim
            return [TableCell(d.target), TableCell(d.type),
                    TableCell(d.state.rawValue, role: stateRole),
                    TableCell("\(d.attempts) attempt\(d.attempts == 1 ? "" : "s")"),
                    TableCell(d.delivered.map(state.time.minute) ?? "-", role: d.delivered == nil ? .dim : nil),
                    TableCell(ForwardStatusText.outcome(d), role: d.state == .delivered ? .dim : stateRole)]
        }
        TableView(columns: columns, rows: rows, showsHeader: false, columnSpacing: 2)
            .render(in: Rect(x: area.x, y: y, width: area.width, height: area.maxY - y), buffer: &buffer)
    }

    /// One header line: a label, then pieces of text each in its own role.
    struct Line {
        var label: String
        var pieces: [(text: String, role: StyleRole)]
    }

    /// Draws a line; after the first piece, a piece that does not fit whole is left out with all after it,
    /// since half a date reads as a wrong date. What is left out or cut ends in "…", so a
    /// reader knows there is more (`:messages`-style wholeness is in the timeline's payloads).
    static func draw(_ line: Line, x: Int, y: Int, maxX: Int, buffer: inout ScreenBuffer) {
        var column = x
        column += buffer.put(line.label.padding(toLength: 9, withPad: " ", startingAt: 0), x: column, y: y,
                             role: .title, maxWidth: maxX - column)
        for (index, piece) in line.pieces.enumerated() where column < maxX {
            let text = SafeText.sanitize(piece.text)
            let width = TextWidth.width(of: text)
            if column + width > maxX {
                if index == 0 {
                    buffer.put(TextWidth.truncate(text, toWidth: maxX - column), x: column, y: y, role: piece.role, maxWidth: maxX - column)
                } else {
                    buffer.put(String(TextWidth.ellipsis), x: min(column + 1, maxX - 1), y: y, role: .dim, maxWidth: 1)
                }
                return
            }
            column += buffer.put(text, x: column, y: y, role: piece.role, maxWidth: maxX - column)
        }
    }

    static func headerLines(_ content: DetailContent, state: DashboardState, width: Int) -> [Line] {
        let s = content.report.state
        let now = state.now
        let time = state.time

        let override = content.report.entitlement.override
        // With an override in force, this line is Apple's view and says so; the next line is the override's.
        let entitlement = (override == nil ? "" : "Apple: ") + (s.entitled ? "entitled" : "not entitled")
        // The facts from the fullest to the shortest telling; the first that fits is shown, so
        // Apple's entitlement and the date that matters are never cut at 80 columns.
        var tellings: [[String]] = []
        switch s.status {
        case .gracePeriod:
            if let grace = s.gracePeriodExpiresDate {
                tellings = [[entitlement, "\(DateText.duration(grace - now)) left", "until \(time.minute(grace))"],
                            [entitlement, "grace until \(time.minute(grace))"],
                            [entitlement, "until \(time.shortMinute(grace))"]]
            }
        case .active:
            if let expires = s.expiresDate {
                tellings = [[entitlement, (s.autoRenewStatus ? "renews " : "ends ") + DashboardRenderer.relative(expires, now: now)]]
            }
        case .expired, .billingRetry:
            if let expires = s.expiresDate {
                tellings = [[entitlement, "expired " + DashboardRenderer.relative(expires, now: now)],
                            [entitlement, "expired " + time.shortMinute(expires)]]
            }
        case .revoked:
            // When and why Apple took it back, from the revoked transaction: the expiry
            // date alone would read as a subscription still running.
            let revoked = content.report.history.transactions.filter(\.isRevoked).max { ($0.revocationDate ?? 0) < ($1.revocationDate ?? 0) }
            let when = revoked?.revocationDate.map { "revoked " + time.minute($0) } ?? "refunded or revoked"
            let reason = revoked?.revocationReason.map { "reason: " + $0.words }
            let shortReason = revoked?.revocationReason.map(\.shortWords)
            let shortWhen = revoked?.revocationDate.map { "revoked " + time.shortMinute($0) } ?? when
            let f = content.facts
            let kind = [f.revocationType, f.revocationShare.map { $0 + " refunded" }].compactMap { $0 }
            tellings = [[entitlement, when] + (reason.map { [$0] } ?? []) + kind,
                        [entitlement, when] + (reason.map { [$0] } ?? []),
                        [entitlement, shortWhen] + (shortReason.map { [$0] } ?? []),
                        [entitlement, shortWhen]]
        }
        let room = width - 9 - TextWidth.width(of: s.status.label) - 4
        let facts = tellings.first { TextWidth.width(of: $0.joined(separator: ", ")) <= room } ?? tellings.last ?? [entitlement]
        let status: [(String, StyleRole)] = [(s.status.label, Styling.role(for: s.status)),
                                             ("  (" + facts.joined(separator: ", ") + ")", .normal)]

        var product: [(String, StyleRole)] = [(s.productId, .normal)]
        if s.status == .revoked {
            // When access ended (the refund), not the refunded period's end, which may be a year ahead.
            if let ended = content.report.accessEnded { product.append(("   access ended " + time.minute(ended), .normal)) }
        } else if let expires = s.expiresDate {
            product.append(("   " + (expires > now ? "expires " : "expired ") + time.minute(expires), .normal))
        }
        if let purchased = s.purchaseDate { product.append(("   period began " + time.minute(purchased), .dim)) }

        var renewal: [(String, StyleRole)] = [("auto-renew ", .normal),
                                              (s.autoRenewStatus ? "ON" : "OFF", s.autoRenewStatus ? .success : .warning)]
        if let next = s.autoRenewProductId { renewal.append((" → " + next, .normal)) }
        if let change = s.pendingChange {
            let when = change.effectiveDate.map { " at " + time.minute($0) } ?? ""
            var text = "   pending \(change.kind) to \(change.productId)\(when)"
            let used = renewal.map { TextWidth.width(of: $0.0) }.reduce(9, +)
            // The arrow already names the product; on a narrow screen the date is what must not be lost.
            if used + TextWidth.width(of: text) > width { text = "   \(change.kind)\(when)" }
            renewal.append((text, .accent))
        }

        var billing: [(String, StyleRole)] = []
        if s.isInBillingRetryPeriod {
            billing.append(("in billing retry" + (s.expiresDate.map { " since " + time.minute($0) } ?? ""), .badgeBillingRetry))
        }
        if let grace = s.gracePeriodExpiresDate, s.status != .gracePeriod {
            billing.append(((billing.isEmpty ? "" : " · ") + "grace period ended \(time.minute(grace))", .dim))
        } else if s.status == .gracePeriod {
            billing.append(((billing.isEmpty ? "" : " · ") + "grace period", .badgeGrace))
        }
        if billing.isEmpty { billing.append(("no billing problem", .dim)) }

        let consent: String
        switch s.priceIncreaseStatus {
        case nil: consent = "none"
        case 0?: consent = "awaiting consent"
        case 1?: consent = "consented"
        case let other?: consent = "status \(other)"
        }
        var intent: [(String, StyleRole)] = s.expirationIntent.map {
            [("\($0) · \(ExpirationIntent.meaning($0))", .normal)]
        } ?? [("none", .dim)]

        var offer: [(String, StyleRole)] = []
        if let description = Timeline.offerDescription(type: s.offerType, discount: s.offerDiscountType,
                                                       identifier: s.offerIdentifier) {
            offer.append((description + (content.facts.offerPeriod.map { " · " + $0 } ?? "") + (s.isTrial ? " (current period)" : ""), .normal))
        } else {
            offer.append(("no offer on the current period", .dim))
        }
        if let trial = content.report.history.transactions.filter({ $0.offerDiscountType == "FREE_TRIAL" })
            .min(by: { $0.purchaseDate < $1.purchaseDate }) {
            offer.append(("   trial used " + time.day(trial.purchaseDate), .dim))
        }

        func owner(fullToken: Bool) -> [String] {
            var parts: [String] = []
            if let user = content.subscriber.userId { parts.append("user " + user) }
            if let token = content.subscriber.appAccountToken {
                parts.append("token " + (fullToken || token.count <= 12 ? token : token.prefix(4) + "…" + token.suffix(4)))
            }
            if parts.isEmpty { parts.append("subscriber #\(content.subscriber.id)") }
            parts.append(s.isFamilyShared ? "FAMILY SHARED" : "PURCHASED")
            parts.append(s.environment)
            if let storefront = content.facts.storefront { parts.append("storefront " + storefront) }
            if !content.otherSubscriptions.isEmpty {
                let count = content.otherSubscriptions.count
                parts.append("\(count) other subscription\(count == 1 ? "" : "s")")
            }
            return parts
        }
        var ownerParts = owner(fullToken: true)
        if TextWidth.width(of: ownerParts.joined(separator: " · ")) > width - 9 { ownerParts = owner(fullToken: false) }
        // Each fact a piece of its own: one that does not fit is left out whole, marked "…".
        let ownerRole: StyleRole = s.isFamilyShared ? .accent : .normal
        let ownerPieces = ownerParts.enumerated().map { ($0.offset == 0 ? $0.element : " · " + $0.element, ownerRole) }

        // Price-increase consent belongs with renewal; when a pending change fills that line it moves
        // next to the intent (declining an increase is an intent of its own), then to the offer line.
        let priceIncrease = ("   price increase: " + consent, s.priceIncreaseStatus == 0 ? StyleRole.warning : .normal)
        func fits(_ pieces: [(String, StyleRole)]) -> Bool {
            pieces.map { TextWidth.width(of: $0.0) }.reduce(9, +) + TextWidth.width(of: priceIncrease.0) <= width
        }
        if fits(renewal) {
            renewal.append(priceIncrease)
        } else if fits(intent) {
            intent.append(priceIncrease)
        } else {
            offer.append(priceIncrease)
        }

        // Apple's facts beyond the state, last on their lines: dropped first when space runs out.
        let f = content.facts
        // Only a renewal still ahead: once its date passed, the status line says what happened
        // instead (grace until, billing retry, expired).
        if let date = f.renewalDate, date > now, let next = f.renewalFact(s, now: now, date: time.minute) {
            renewal.append(("   next " + SafeText.sanitize(next), .dim))
        }
        if let request = content.refundRequests.first {
            // The queue's standing, so support sees a refund in flight without leaving the detail.
            let stage = request.stage(now: now)
            intent.append(("   refund request" + (f.consumptionRequestReason.map { " (\($0))" } ?? "") + ": " + request.standing(now: now),
                           stage == .open || stage == .missed ? .warning : .dim))
        } else if let reason = f.consumptionRequestReason {
            intent.append(("   consumption request: " + reason, .warning))
        }
        if !f.winBackOfferIds.isEmpty { intent.append(("   win-back eligible: " + f.winBackOfferIds.joined(separator: ", "), .accent)) }

        var lines = [Line(label: "Status", pieces: status)]
        if let override {
            lines.append(overrideLine(override, state: state, width: width))
        }
        return lines + [
            Line(label: "Product", pieces: product),
            Line(label: "Renewal", pieces: renewal),
        ] + commitmentLines(content, time: time) + appLines(content, time: time) + [
            Line(label: "Billing", pieces: billing),
            Line(label: "Intent", pieces: intent),
            Line(label: "Offer", pieces: offer),
            Line(label: "Owner", pieces: ownerPieces),
        ]
    }

    /// The app download the subscription was bought from, and any withdrawal of consent for
    /// it (a RESCIND_CONSENT: Apple no longer lets the app launch for that user), open
    /// withdrawals as a warning until an operator marks them handled (`:consent`).
    static func appLines(_ content: DetailContent, time: ZonedTime) -> [Line] {
        var lines: [Line] = []
        if let app = content.report.appTransaction {
            lines.append(Line(label: "App", pieces: [(SafeText.sanitize(app.phrases.joined(separator: " · ")), .dim)]))
        }
        for w in content.report.consentWithdrawals {
            lines.append(Line(label: "Consent", pieces: [
                ("WITHDRAWN " + time.minute(w.signedDate), w.isHandled ? .accent : .warning),
                (SafeText.sanitize(" · " + w.statusText), .dim),
            ]))
        }
        return lines
    }

    /// The commitment's line, when the plan has one: its plan, the period of the total, when it
    /// ends and what it costs, and whether it renews, which is what decides when paying stops.
    static func commitmentLines(_ content: DetailContent, time: ZonedTime) -> [Line] {
        guard let commitment = content.report.commitment else { return [] }
        let phrases = commitment.phrases(date: time.minute).map(SafeText.sanitize)
        var pieces: [(String, StyleRole)] = [(phrases.dropLast().joined(separator: " · "), .normal)]
        let last = phrases.last ?? ""
        pieces.append(((phrases.count > 1 ? " · " : "") + last, commitment.willRenew == false ? .warning : .dim))
        return [Line(label: "Commit", pieces: pieces)]
    }

    /// `Override GRANT #3 · entitled until 2026-12-31 00:00 (in 45d 12h) · by ana: ticket 4411`; the reason,
    /// which can be long, is cut to what fits rather than dropped.
    static func overrideLine(_ o: Override, state: DashboardState, width: Int) -> Line {
        let time = state.time
        var pieces: [(text: String, role: StyleRole)] = [
            ("\(o.kind.rawValue.uppercased()) #\(o.id)", o.entitles ? .success : .error),
            (" · " + (o.entitles ? "entitled" : "not entitled"), .normal),
        ]
        if let until = o.until {
            pieces.append((" until \(time.minute(until)) (\(DashboardRenderer.relative(until, now: state.now)))", .normal))
        } else {
            pieces.append((" until lifted", .normal))
        }
        let used = pieces.map { TextWidth.width(of: $0.text) }.reduce(9, +)
        let by = " · by \(SafeText.sanitize(o.operatorName)): \(SafeText.sanitize(o.reason))"
        if used + 8 < width {
            pieces.append((TextWidth.truncate(by, toWidth: width - used), .dim))
        }
        return Line(label: "Override", pieces: pieces)
    }

    static func entries(_ detail: DetailState, time: ZonedTime, meanings: NotificationMeanings) -> [TimelineEntry] {
        detail.timeline.map { event in
            var kind = event.kind.rawValue
            var text = event.detail
            if event.kind == .notification {
                // The type is what people scan for; "notification" on every line would hide it.
                let parts = event.detail.components(separatedBy: "  ")
                kind = parts.first ?? kind
                text = parts.dropFirst().joined(separator: "  ")
            }
            return TimelineEntry(date: time.minute(event.date), kind: kind, detail: text,
                                 role: Styling.role(forTimeline: event, in: meanings),
                                 extraLines: detail.expanded[DetailState.entryKey(event)] ?? [])
        }
    }

    static func renderTimeline(_ detail: DetailState, state: DashboardState, in area: Rect, buffer: inout ScreenBuffer) {
        guard !area.isEmpty else { return }
        let entries = entries(detail, time: state.time, meanings: state.meanings)
        let expanded = Set(detail.timeline.indices.filter { detail.expanded[DetailState.entryKey(detail.timeline[$0])] != nil })
        // The reducer owns the scroll position (it scrolls through long payloads line by line),
        // so the widget draws no selection of its own and the selected line is restyled here.
        TimelineView(entries: entries, selectedEntry: nil, expandedEntries: expanded, scrollOffset: detail.scrollOffset,
                     kindWidth: min(entries.map { TextWidth.width(of: $0.kind) }.max() ?? 0, area.width * 2 / 5), emptyText: "no events")
            .render(in: area, buffer: &buffer)
        let starts = Selectors.timelineLines(detail).starts
        if starts.indices.contains(detail.selection) {
            let row = starts[detail.selection] - detail.scrollOffset
            if row >= 0 && row < area.height {
                buffer.restyle(Rect(x: area.x, y: area.y + row, width: area.width, height: 1), role: .selection)
            }
        }
    }
}
