import Foundation
import COpenSSL

/// Small bridges to libcrypto shared by the verification types.
enum OpenSSL {
    /// Drains libcrypto's thread-local error queue into one readable line.
    ///
    /// Always drained, even when unused, so a stale error never gets blamed on
    /// a later, unrelated call on the same thread.
    static func takeErrors(fallback: String = "no detail from libcrypto") -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if let reason = ERR_reason_error_string(code) {
                messages.append(String(cString: reason))
            } else {
                var buffer = [CChar](repeating: 0, count: 256)
                ERR_error_string_n(code, &buffer, buffer.count)
                messages.append(String(cString: buffer))
            }
        }
        var seen = Set<String>()
        messages = messages.filter { seen.insert($0).inserted }
        return messages.isEmpty ? fallback : messages.joined(separator: "; ")
    }

    static func clearErrors() { ERR_clear_error() }

    static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else {
            clearErrors()
            return nil
        }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }

    /// Runs `body` with a read-only memory BIO over `data`.
    static func withMemoryBIO<T>(_ data: Data, _ body: (OpaquePointer) throws -> T) throws -> T? {
        try data.withUnsafeBytes { raw -> T? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return try body(bio)
        }
    }

    /// The curve name of an EC key (`prime256v1` for P-256); `nil` for any
    /// other kind of key.
    static func curveName(_ key: OpaquePointer) -> String? {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return nil }
        var buffer = [CChar](repeating: 0, count: 80)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &buffer, buffer.count, &length) == 1 else {
            clearErrors()
            return nil
        }
        return String(cString: buffer)
    }

    static func isP256(_ key: OpaquePointer) -> Bool {
        curveName(key) == "prime256v1"
    }

    /// Says what kind of key this is, for errors about the wrong kind.
    static func keyDescription(_ key: OpaquePointer) -> String {
        if let curve = curveName(key) { return "an EC key on \(curve)" }
        if let name = EVP_PKEY_get0_type_name(key) { return "a \(String(cString: name)) key" }
        return "a key of unknown type"
    }
}

extension Data {
    var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension String {
    /// Makes text taken from a certificate or a payload safe to put in an
    /// error message, which may end up on a terminal or in a log.
    func escapingControlCharacters(limit: Int = 200) -> String {
        var out = ""
        for scalar in unicodeScalars {
            if out.count >= limit { return out + "…" }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
