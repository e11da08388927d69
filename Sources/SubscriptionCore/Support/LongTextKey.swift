/// A dictionary key for long texts that repeat verbatim (JWS headers carry kilobytes of
/// certificates, SQL statements hundreds of bytes): hashes only the length and the last
/// 64 bytes, which already differ between chains (they end in signatures) and between
/// statements, and compares the whole text on a hit.
struct LongTextKey: Hashable {
    let text: String

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[max(0, bytes.count - 64)...])))
        }
    }

    static func == (a: LongTextKey, b: LongTextKey) -> Bool { a.text == b.text }
}
