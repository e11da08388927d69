import Foundation

/// The bodies of one input (a file, or standard input), read as intake takes them in: NDJSON
/// a line at a time, so that only the bodies in flight are held, however long the input. The
/// bodies are those `IngestCommand.splitBodies` gives for the whole input: blank lines
/// skipped; one line alone is that line when it is a JSON document, else the whole input; an
/// input whose first line is not JSON (a pretty-printed document) is read whole and split so.
final class BodyStream {
    /// Reads up to this many bytes at a time.
    static let chunkBytes = 1 << 20

    private let read: () throws -> Data?
    /// Bytes read and not yet split into lines: those from `position` on.
    private var buffer = Data()
    private var position = 0
    private var atEnd = false
    /// The number of the next line.
    private var lineNumber = 1
    /// While deciding how the input splits: every byte taken so far, in case it is read whole.
    private var consumed: Data?
    /// Bodies found, in order; those from `handedOut` on are not yet handed out.
    private var pending: [(data: Data, line: Int)] = []
    private var handedOut = 0
    private var streaming = false
    /// Whether the input holds more than one body (each is then named by its line).
    private(set) var several = false
    /// The line of each body handed out so far, by its index (8 bytes a body).
    private(set) var lines: [Int] = []

    /// Reads `handle` from where it is; what decides how the input splits (its first two
    /// bodies) is read now.
    convenience init(handle: FileHandle) throws {
        try self.init { try handle.read(upToCount: BodyStream.chunkBytes) }
    }

    /// `read` gives the next bytes of the input, nil (or nothing) at its end.
    init(read: @escaping () throws -> Data?) throws {
        self.read = read
        consumed = Data()
        var found: [(data: Data, line: Int)] = []
        while found.count < 2, let line = try nextLine() {
            if !line.isBlank { found.append((line.data, line.number)) }
        }
        if found.count == 2, (try? JSONSerialization.jsonObject(with: found[0].data, options: [.fragmentsAllowed])) != nil {
            consumed = nil
            pending = found
            streaming = true
            several = true
            return
        }
        // One line, or a first line that is not JSON: the whole input decides, as before.
        var whole = consumed ?? Data()
        consumed = nil
        whole.append(buffer[(buffer.startIndex + position)...])
        buffer = Data()
        position = 0
        while !atEnd {
            if let more = try read(), !more.isEmpty { whole.append(more) } else { atEnd = true }
        }
        pending = IngestCommand.splitBodies(whole)
        several = pending.count > 1
    }

    /// Whether the input holds no body at all (nothing but blank lines).
    var isEmpty: Bool { pending.isEmpty && lines.isEmpty && !streaming }

    /// The next body and the line it starts on, or nil after the last.
    func next() throws -> (data: Data, line: Int)? {
        if handedOut == pending.count && streaming {
            pending.removeAll(keepingCapacity: true)
            handedOut = 0
            while let line = try nextLine() {
                if !line.isBlank {
                    pending.append((line.data, line.number))
                    break
                }
            }
        }
        guard handedOut < pending.count else { return nil }
        let body = pending[handedOut]
        // Handed out: the stream keeps no reference to it.
        pending[handedOut].data = Data()
        handedOut += 1
        lines.append(body.line)
        return body
    }

    private struct Line {
        let data: Data
        let number: Int
        var isBlank: Bool { BodyStream.isBlank(data) }
    }

    /// Whether a line holds only spaces, tabs and carriage returns (or nothing): no body.
    static func isBlank(_ bytes: some Sequence<UInt8>) -> Bool {
        bytes.allSatisfy { $0 == 32 || $0 == 9 || $0 == 13 }
    }

    /// The index of the first newline of `data` at or after `from` (memchr: a line is
    /// kilobytes long, and a byte-by-byte walk over `Data` costs more than the rest).
    private static func newline(in data: Data, from: Data.Index) -> Data.Index? {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Data.Index? in
            let offset = from - data.startIndex
            guard let base = raw.baseAddress, offset < raw.count,
                  let found = memchr(base + offset, 10, raw.count - offset) else { return nil }
            return data.startIndex + (UnsafeRawPointer(found) - base)
        }
    }

    /// The next line without its newline (the last one may have none), or nil at the end.
    private func nextLine() throws -> Line? {
        while true {
            let from = buffer.startIndex + position
            if let newline = Self.newline(in: buffer, from: from) {
                let line = Line(data: Data(buffer[from..<newline]), number: lineNumber)
                consumed?.append(buffer[from...newline])
                position = newline + 1 - buffer.startIndex
                lineNumber += 1
                return line
            }
            if atEnd {
                guard from < buffer.endIndex else { return nil }
                let line = Line(data: Data(buffer[from...]), number: lineNumber)
                consumed?.append(buffer[from...])
                position = buffer.count
                return line
            }
            // The unsplit rest moves to the front once a chunk, not once a line.
            if let more = try read(), !more.isEmpty {
                buffer = Data(buffer[from...]) + more
                position = 0
            } else {
                atEnd = true
            }
        }
    }
}
