import Foundation

/// A retention message or image refused before any call to Apple, named.
public struct RetentionContentError: Error, Equatable, CustomStringConvertible {
    public let field: String
    public let problem: String
    public init(_ field: String, _ problem: String) {
        self.field = field
        self.problem = problem
    }
    public var description: String { "\(field): \(problem)" }
}

/// Apple's limits on what the Retention Messaging API takes, checked locally before a call
/// (UploadMessageRequestBody, BulletPoint, UploadMessageImage, realtimeURL, Upload Image).
///
/// Lengths are counted in UTF-16 code units, the strictest count of a "character" Apple's
/// documentation could mean (an emoji counts 2, a letter with a combining accent 2): a text
/// accepted here is within Apple's limit whichever count Apple applies.
public enum RetentionText {
    public static let maxHeader = 66
    public static let maxBody = 144
    public static let maxBullet = 66
    public static let maxBullets = 5
    public static let maxAltText = 150
    public static let maxRealtimeURL = 256

    public static func length(_ text: String) -> Int { text.utf16.count }

    static func checkLength(_ text: String, _ field: String, max: Int) throws {
        guard !text.isEmpty else { throw RetentionContentError(field, "empty") }
        let n = length(text)
        guard n <= max else { throw RetentionContentError(field, "\(n) characters (UTF-16 code units), more than Apple's \(max)") }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw RetentionContentError(field, "contains control characters")
        }
    }

    /// An identifier Apple takes for a message, image or performance test: a UUID, lower-cased.
    public static func identifier(_ text: String, field: String = "identifier") throws -> String {
        guard let uuid = UUID(uuidString: text) else { throw RetentionContentError(field, "\(text.escapingControlCharacters(limit: 80)) is not a UUID") }
        return uuid.uuidString.lowercased()
    }

    public static func productId(_ text: String) throws -> String {
        guard !text.isEmpty, text.count <= 100, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
            throw RetentionContentError("product", "\(text.escapingControlCharacters(limit: 80)) is not a product id (letters, digits, . _ -)")
        }
        return text
    }

    /// A locale as Apple's paths name it (`en-US`, `zh-Hans`): letters and digits in parts joined by - or _.
    public static func locale(_ text: String) throws -> String {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }
        guard text.count <= 35, !parts.isEmpty, parts[0].count >= 2, parts[0].count <= 3,
              parts.allSatisfy({ !$0.isEmpty && $0.count <= 8 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }) else {
            throw RetentionContentError("locale", "\(text.escapingControlCharacters(limit: 80)) is not a locale (such as en-US)")
        }
        return text
    }

    public static func realtimeURL(_ text: String) throws -> String {
        guard text.hasPrefix("https://"), let url = URL(string: text), let host = url.host, !host.isEmpty else {
            throw RetentionContentError("realtimeURL", "\(text.escapingControlCharacters(limit: 80)) does not begin with https:// and a host, as Apple requires")
        }
        guard text.count <= maxRealtimeURL else { throw RetentionContentError("realtimeURL", "\(text.count) characters, more than Apple's \(maxRealtimeURL)") }
        return text
    }
}

/// Where the header goes (`headerPosition`): above the body (Apple's default) or above the image.
public enum RetentionHeaderPosition: String, CaseIterable, Sendable {
    case aboveBody = "ABOVE_BODY"
    case aboveImage = "ABOVE_IMAGE"
}

/// A message as Upload Message takes it, checked against Apple's limits when made.
public struct RetentionMessage: Equatable, Sendable {
    public struct Picture: Equatable, Sendable {
        public var imageId: String
        public var altText: String
        public init(imageId: String, altText: String) {
            self.imageId = imageId
            self.altText = altText
        }
    }
    public struct Bullet: Equatable, Sendable {
        public var text: String
        public var imageId: String
        public var altText: String
        public init(text: String, imageId: String, altText: String) {
            self.text = text
            self.imageId = imageId
            self.altText = altText
        }
    }

    public let header: String
    public let body: String
    public let image: Picture?
    public let bullets: [Bullet]
    public let headerPosition: RetentionHeaderPosition?

    public init(header: String, body: String, image: Picture? = nil, bullets: [Bullet] = [],
                headerPosition: RetentionHeaderPosition? = nil) throws {
        try RetentionText.checkLength(header, "header", max: RetentionText.maxHeader)
        try RetentionText.checkLength(body, "body", max: RetentionText.maxBody)
        var checkedImage = image
        if let image {
            checkedImage?.imageId = try RetentionText.identifier(image.imageId, field: "image")
            try RetentionText.checkLength(image.altText, "image alt text", max: RetentionText.maxAltText)
        }
        guard bullets.count <= RetentionText.maxBullets else {
            throw RetentionContentError("bullets", "\(bullets.count) bullet points, more than Apple's \(RetentionText.maxBullets)")
        }
        var checkedBullets: [Bullet] = []
        for (i, bullet) in bullets.enumerated() {
            try RetentionText.checkLength(bullet.text, "bullet \(i + 1)", max: RetentionText.maxBullet)
            let id = try RetentionText.identifier(bullet.imageId, field: "bullet \(i + 1) image")
            try RetentionText.checkLength(bullet.altText, "bullet \(i + 1) alt text", max: RetentionText.maxAltText)
            checkedBullets.append(Bullet(text: bullet.text, imageId: id, altText: bullet.altText))
        }
        if headerPosition == .aboveImage && image == nil {
            throw RetentionContentError("header position", "ABOVE_IMAGE needs an image")
        }
        self.header = header
        self.body = body
        self.image = checkedImage
        self.bullets = checkedBullets
        self.headerPosition = headerPosition
    }

    /// UploadMessageRequestBody, keys sorted: the bytes sent and checksummed.
    public var requestBody: Data {
        var object: [String: Any] = ["header": header, "body": body]
        if let image { object["image"] = ["imageIdentifier": image.imageId, "altText": image.altText] }
        if !bullets.isEmpty {
            object["bulletPoints"] = bullets.map { ["text": $0.text, "imageIdentifier": $0.imageId, "altText": $0.altText] }
        }
        if let headerPosition { object["headerPosition"] = headerPosition.rawValue }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }
}

/// What a PNG file's header says, read without decoding the image: enough to apply Apple's
/// rules (PNG, no transparency, the size class's dimensions).
public struct RetentionPNG: Equatable, Sendable {
    public let width: Int
    public let height: Int
    public let colourType: Int
    public let hasTransparencyChunk: Bool

    /// The largest file read (Apple names no byte limit; a retention image is a few MB at most).
    public static let maxBytes = 20 << 20
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Reads the chunks up to IDAT: IHDR's size and colour type, and whether a tRNS chunk is there.
    public init(_ data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.count <= Self.maxBytes else { throw RetentionContentError("image", "\(bytes.count) bytes, more than the \(Self.maxBytes) read") }
        guard bytes.count >= 33, Array(bytes[0..<8]) == Self.signature else { throw RetentionContentError("image", "not a PNG file (Apple takes PNG only)") }
        func u32(_ at: Int) -> Int { Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) }
        guard u32(8) == 13, String(decoding: bytes[12..<16], as: UTF8.self) == "IHDR" else {
            throw RetentionContentError("image", "the PNG does not start with its IHDR chunk")
        }
        width = u32(16)
        height = u32(20)
        colourType = Int(bytes[25])
        guard [0, 2, 3, 4, 6].contains(colourType) else { throw RetentionContentError("image", "PNG colour type \(colourType) is not one PNG defines") }
        var offset = 33
        var transparency = false
        while offset + 8 <= bytes.count {
            let length = u32(offset)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if type == "tRNS" { transparency = true }
            if type == "IDAT" || type == "IEND" { break }
            guard length >= 0, length <= bytes.count - offset - 12 else { throw RetentionContentError("image", "the PNG's \(type.escapingControlCharacters()) chunk runs past the file's end") }
            offset += 12 + length
        }
        hasTransparencyChunk = transparency
    }

    /// Apple's rules for `kind`, as refusals (none: acceptable).
    public func check(as kind: RetentionImageKind) throws {
        if colourType == 4 || colourType == 6 {
            throw RetentionContentError("image", "the PNG has an alpha channel (colour type \(colourType)); Apple takes images without transparency")
        }
        if hasTransparencyChunk {
            throw RetentionContentError("image", "the PNG has a tRNS (transparency) chunk; Apple takes images without transparency")
        }
        switch kind {
        case .fullSize:
            // Upload Image: "the width must be 3840 pixels, and the height can be between 160 to 2160 pixels".
            guard width == 3840, (160...2160).contains(height) else {
                throw RetentionContentError("image", "\(width) × \(height) pixels; a FULL_SIZE image is 3840 wide and 160 to 2160 high")
            }
        case .bulletPoint:
            guard width > 0, height > 0, width <= 3840, height <= 2160 else {
                throw RetentionContentError("image", "\(width) × \(height) pixels is not a bullet point image's size")
            }
        }
    }
}
