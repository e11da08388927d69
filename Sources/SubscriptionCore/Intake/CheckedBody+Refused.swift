import Foundation

extension Intake.CheckedBody {
    /// A body refused before it is read for what it says (a webhook URL whose `?app=` is
    /// unreadable, say): `Intake.commit` quarantines it with `refusal`.
    public static func refused(_ body: Data, source: String?, refusal: Refusal, receivedAt: Millis = DateText.nowMillis()) -> Intake.CheckedBody {
        Intake.CheckedBody(body: body, digest: ContentDigest.sha256Hex(body), source: source, receivedAt: receivedAt, keep: true,
                           verdict: .refused(refusal))
    }
}
