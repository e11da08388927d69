/// Apple's `offerType` on a transaction or renewal info, as a closed table: each known raw
/// value with the segment value the counts split on and the words the timeline and the
/// detail use. A raw value Apple adds later is kept as its number (`type_N`, `offer type N`).
public enum OfferType: Hashable, Sendable, CustomStringConvertible {
    /// 1: an introductory offer (a free trial, or a discounted first period).
    case introductory
    /// 2: a promotional offer, signed by the app's In-App Purchase key.
    case promotional
    /// 3: an offer code.
    case offerCode
    /// 4: a win-back offer.
    case winBack
    /// 5: a retention offer, redeemed on the App Store's cancellation sheet (Retention Messaging).
    case retention
    case unknown(Int)

    /// Every known type, in Apple's order of raw values.
    public static let known: [OfferType] = [.introductory, .promotional, .offerCode, .winBack, .retention]

    public init(rawValue: Int) {
        self = Self.known.first { $0.rawValue == rawValue } ?? .unknown(rawValue)
    }

    /// The raw value, as Apple's field reads.
    public var description: String { String(rawValue) }

    public var rawValue: Int {
        switch self {
        case .introductory: return 1
        case .promotional: return 2
        case .offerCode: return 3
        case .winBack: return 4
        case .retention: return 5
        case .unknown(let raw): return raw
        }
    }

    /// The counts' `offer=` value: an introductory offer is `free_trial` when it is a free
    /// trial; an unknown type is `type_N`.
    public func segmentValue(freeTrial: Bool) -> String {
        switch self {
        case .introductory: return freeTrial ? "free_trial" : "introductory"
        case .promotional: return "promotional"
        case .offerCode: return "offer_code"
        case .winBack: return "win_back"
        case .retention: return "retention"
        case .unknown(let raw): return "type_\(raw)"
        }
    }

    /// Every `offer=` value the known types give, after `none` (no offer): what help and
    /// the README list.
    public static var segmentValues: [String] {
        ["none"] + known.flatMap { $0 == .introductory ? ["free_trial", "introductory"] : [$0.segmentValue(freeTrial: false)] }
    }

    /// How the timeline and the detail name it.
    public var words: String {
        switch self {
        case .introductory: return "intro offer"
        case .promotional: return "promotional offer"
        case .offerCode: return "offer code"
        case .winBack: return "win-back offer"
        case .retention: return "retention offer"
        case .unknown(let raw): return "offer type \(raw)"
        }
    }
}
