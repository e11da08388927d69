import Foundation

/// The bodies of one input (a file, or standard input), read as intake takes them in: NDJSON
/// a line at a time, so that only the bodies in flight are held, however long the input. The
/// bodies are those `IngestCommand.splitBodies` gives for the whole input: blank lines
/// skipped; one line alone is that line when it is a JSON document, else the whole input; an
/// input whose first line is not JSON (a pretty-printed document) is read whole and split so.
final class BodyStream {
    /// Reads up to this many bytes at a time.
    static let chunkBytes = 1 << 20

    /// The next bytes of the input; what it returns is copied before it is called again (a
    /// file's reader hands out its one read buffer each time).
    private let read: () throws -> Data?
    /// Bytes read and not yet split into lines: those from `position` on. One array for the
    /// whole input: the rest of a chunk moves to its front and the next chunk is appended
    /// after it, in the capacity it already has.
    private var buffer: [UInt8] = []
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
        // read(2) into one buffer, handed out without a copy: each chunk is copied into
        // `buffer` before the next read, so no chunk costs an allocation (and the page faults
        // of fresh memory) of its own.
        // The closure holds both the buffer (freed with it) and the handle (which closes its
        // descriptor when freed).
        let scratch = ReadBuffer(bytes: BodyStream.chunkBytes)
        try self.init {
            while true {
                let count = Glibc.read(handle.fileDescriptor, scratch.bytes.baseAddress, scratch.bytes.count)
                if count > 0 { return Data(bytesNoCopy: scratch.bytes.baseAddress!, count: count, deallocator: .none) }
                if count == 0 { return nil }
                if errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            }
        }
    }

    /// Memory a file's reads go to, freed when the last reference to it goes.
    private final class ReadBuffer {
        let bytes: UnsafeMutableRawBufferPointer
        init(bytes count: Int) { bytes = .allocate(byteCount: count, alignment: 16) }
        deinit { bytes.deallocate() }
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
        whole.append(contentsOf: buffer[position...])
        buffer = []
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

    /// The index of the first newline of `bytes` at or after `from` (memchr: a line is
    /// kilobytes long, and a byte-by-byte walk costs more than the rest).
    private static func newline(in bytes: [UInt8], from: Int) -> Int? {
        bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int? in
            guard let base = raw.baseAddress, from < raw.count,
                  let found = memchr(base + from, 10, raw.count - from) else { return nil }
            return UnsafeRawPointer(found) - base
        }
    }

    /// The next line without its newline (the last one may have none), or nil at the end.
    private func nextLine() throws -> Line? {
        while true {
            let from = position
            if let newline = Self.newline(in: buffer, from: from) {
                let line = Line(data: Data(buffer[from..<newline]), number: lineNumber)
                consumed?.append(contentsOf: buffer[from...newline])
                position = newline + 1
                lineNumber += 1
                return line
            }
            if atEnd {
                guard from < buffer.count else { return nil }
                let line = Line(data: Data(buffer[from...]), number: lineNumber)
                consumed?.append(contentsOf: buffer[from...])
                position = buffer.count
                return line
            }
            // The unsplit rest moves to the front once a chunk, not once a line, in place.
            if let more = try read(), !more.isEmpty {
                buffer.removeSubrange(0..<from)
                more.withUnsafeBytes { buffer.append(contentsOf: $0.bindMemory(to: UInt8.self)) }
                position = 0
            } else {
                atEnd = true
            }
        }
    }
}
