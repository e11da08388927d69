import Foundation
import SubscriptionCore

/// Reads a request body in bounded memory. Up to the size limit the body is kept whole;
/// past it only its first bytes are kept, while the rest is read to learn its true length
/// and digest (so identical junk is recognised) and then dropped. Reading stops for good
/// at `cap`, whatever the sender promised.
enum BodyReader {
    struct Result {
        /// The whole body, or its first `Intake.keptPrefixBytes` bytes when it was over the limit.
        var kept: Data
        /// How many bytes arrived.
        var length: Int
        /// SHA-256 (hex) of every byte that arrived.
        var digest: String
        /// Whether `kept` is the whole body (it was within the limit).
        var isWhole: Bool
        /// Whether reading stopped at `cap` before the body ended.
        var stoppedAtCap: Bool
    }

    static let defaultCap = 256 << 20

    /// A body taken in as it arrives, from a file descriptor (CGI) or in FastCGI records.
    struct Accumulator {
        let limit: Int
        let cap: Int
        private(set) var kept = Data()
        private(set) var length = 0
        private let hasher = ContentDigest.Streaming()

        init(limit: Int, cap: Int = BodyReader.defaultCap) {
            self.limit = limit
            self.cap = cap
        }

        /// How many more bytes are taken in: past `cap`, or past what the sender said it
        /// would send, the rest is not read.
        func room(expected: Int?) -> Int { max(0, min(expected ?? Int.max, cap) - length) }

        mutating func append(_ chunk: UnsafeRawBufferPointer) {
            let n = chunk.count
            guard n > 0 else { return }
            hasher.update(chunk)
            // Keep bytes while the body may still be within the limit, and then only the prefix.
            let keepUpTo = length + n <= limit ? length + n : Intake.keptPrefixBytes
            if kept.count < keepUpTo {
                kept.append(contentsOf: chunk.prefix(keepUpTo - kept.count))
            }
            if length + n > limit && kept.count > Intake.keptPrefixBytes {
                kept = kept.prefix(Intake.keptPrefixBytes)
            }
            length += n
        }

        func result(expected: Int?) -> Result {
            Result(kept: kept, length: length, digest: hasher.finishHex(), isWhole: length <= limit,
                   stoppedAtCap: length >= cap && (expected.map { $0 > cap } ?? true))
        }
    }

    static func read(fd: Int32, expected: Int?, limit: Int, cap: Int = defaultCap) -> Result {
        var body = Accumulator(limit: limit, cap: cap)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while body.room(expected: expected) > 0 {
            let n = buffer.withUnsafeMutableBytes { raw -> Int in
                Foundation.read(fd, raw.baseAddress, min(raw.count, body.room(expected: expected)))
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            buffer.withUnsafeBytes { raw in body.append(UnsafeRawBufferPointer(rebasing: raw[0..<n])) }
        }
        return body.result(expected: expected)
    }
}
