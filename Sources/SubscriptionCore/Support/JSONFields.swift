import Foundation

/// A decoding failure that names the field path and what was wrong with it.
public struct DecodingFault: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let problem: String
    public init(path: String, problem: String) { self.path = path; self.problem = problem }
    public var description: String { path.isEmpty ? problem : "\(path): \(problem)" }
}

/// Typed, tolerant access to one JSON object, with errors that name the field.
///
/// Apple's payloads gain fields over time and carry enum values we may not know
/// yet, so unknown keys are ignored and enums are read as raw strings or ints;
/// but a known field of the wrong type is a fault, never silently dropped.
public struct JSONFields {
    public let dictionary: [String: Any]
    public let path: String

    /// The latest date Apple could plausibly send: 9999-12-31.
    static let maxMillis: Millis = 253_402_300_799_999
    static let maxDepth = 32

    public init(dictionary: [String: Any], path: String) {
        self.dictionary = dictionary
        self.path = path
    }

    public init(data: Data, path: String) throws {
        let object: Any
        do {
            object = try FastJSON.parse(data)
        } catch {
            throw DecodingFault(path: path, problem: FastJSON.describe(error))
        }
        guard let dictionary = object as? [String: Any] else {
            throw DecodingFault(path: path, problem: "expected a JSON object")
        }
        if JSONFields.depth(of: dictionary) > JSONFields.maxDepth {
            throw DecodingFault(path: path, problem: "nested deeper than \(JSONFields.maxDepth) levels")
        }
        self.init(dictionary: dictionary, path: path)
    }

    private static func depth(of value: Any) -> Int {
        if let d = value as? [String: Any] { return 1 + (d.values.map(depth).max() ?? 0) }
        if let a = value as? [Any] { return 1 + (a.map(depth).max() ?? 0) }
        return 0
    }

    package func fieldPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    public func has(_ key: String) -> Bool {
        guard let v = dictionary[key] else { return false }
        return !JSONFields.isNull(v)
    }

    private func value(_ key: String) -> Any? {
        guard let v = dictionary[key], !JSONFields.isNull(v) else { return nil }
        return v
    }

    /// Whether a parsed value is JSON's null. Compares the dynamic type: `value is NSNull`
    /// on an `Any` that holds a dictionary or an array would first try to bridge it.
    @inline(__always)
    static func isNull(_ value: Any) -> Bool { type(of: value) == NSNull.self }

    public func string(_ key: String) throws -> String? {
        guard let v = value(key) else { return nil }
        guard let s = v as? String else {
            throw DecodingFault(path: fieldPath(key), problem: "expected a string")
        }
        return s
    }

    public func requiredString(_ key: String) throws -> String {
        guard let s = try string(key) else {
            throw DecodingFault(path: fieldPath(key), problem: "missing")
        }
        return s
    }

    /// A string, or a number rendered as a string (V1 sends some ids either way).
    public func stringOrNumber(_ key: String) throws -> String? {
        guard let v = value(key) else { return nil }
        if let s = v as? String { return s }
        if v is Bool { throw DecodingFault(path: fieldPath(key), problem: "expected a string or number") }
        if let n = v as? Int { return String(n) }
        if let d = v as? Double { return String(d) }
        if let n = v as? NSNumber, !JSONFields.isBool(n) { return n.stringValue }
        throw DecodingFault(path: fieldPath(key), problem: "expected a string or number")
    }

    public func int(_ key: String) throws -> Int? {
        guard let v = value(key) else { return nil }
        if v is Bool { throw DecodingFault(path: fieldPath(key), problem: "expected an integer") }
        if let n = v as? Int { return n }
        if let d = v as? Double {
            guard d.rounded() == d, abs(d) < 9.0e15 else {
                throw DecodingFault(path: fieldPath(key), problem: "expected an integer, found \(d)")
            }
            return Int(d)
        }
        if let n = v as? NSNumber, !JSONFields.isBool(n) {
            let d = n.doubleValue
            guard d.rounded() == d, abs(d) < 9.0e15 else {
                throw DecodingFault(path: fieldPath(key), problem: "expected an integer, found \(n)")
            }
            return Int(d)
        }
        if let s = v as? String, let i = Int(s) { return i }
        throw DecodingFault(path: fieldPath(key), problem: "expected an integer")
    }

    public func int64(_ key: String) throws -> Int64? {
        try int(key).map(Int64.init)
    }

    /// A date in milliseconds. Xcode data carries fractions; V1 sends strings.
    public func millis(_ key: String) throws -> Millis? {
        guard let v = value(key) else { return nil }
        let d: Double
        if v is Bool {
            throw DecodingFault(path: fieldPath(key), problem: "expected a date in milliseconds")
        } else if let n = v as? Int {
            d = Double(n)
        } else if let x = v as? Double {
            d = x
        } else if let n = v as? NSNumber, !JSONFields.isBool(n) {
            d = n.doubleValue
        } else if let s = v as? String, let parsed = Double(s) {
            d = parsed
        } else {
            throw DecodingFault(path: fieldPath(key), problem: "expected a date in milliseconds")
        }
        guard d.isFinite, d >= 0, d <= Double(JSONFields.maxMillis) else {
            throw DecodingFault(path: fieldPath(key), problem: "date \(v) is out of range")
        }
        return Millis(d.rounded(.down))
    }

    /// A boolean; V1 sends "true"/"false" and "1"/"0" strings.
    public func bool(_ key: String) throws -> Bool? {
        guard let v = value(key) else { return nil }
        if let b = v as? Bool { return b }
        if let n = v as? Int, n == 0 || n == 1 { return n == 1 }
        if let n = v as? NSNumber {
            if JSONFields.isBool(n) { return n.boolValue }
            if n.intValue == 0 || n.intValue == 1 { return n.intValue == 1 }
        }
        if let s = v as? String {
            switch s.lowercased() {
            case "true", "1": return true
            case "false", "0": return false
            default: break
            }
        }
        throw DecodingFault(path: fieldPath(key), problem: "expected a boolean")
    }

    public func object(_ key: String) throws -> JSONFields? {
        guard let v = value(key) else { return nil }
        guard let d = v as? [String: Any] else {
            throw DecodingFault(path: fieldPath(key), problem: "expected an object")
        }
        return JSONFields(dictionary: d, path: fieldPath(key))
    }

    public func objects(_ key: String) throws -> [JSONFields]? {
        guard let v = value(key) else { return nil }
        guard let a = v as? [Any] else {
            throw DecodingFault(path: fieldPath(key), problem: "expected an array")
        }
        return try a.enumerated().map { index, element in
            guard let d = element as? [String: Any] else {
                throw DecodingFault(path: "\(fieldPath(key))[\(index)]", problem: "expected an object")
            }
            return JSONFields(dictionary: d, path: "\(fieldPath(key))[\(index)]")
        }
    }

    public func strings(_ key: String) throws -> [String]? {
        guard let v = value(key) else { return nil }
        guard let a = v as? [Any] else {
            throw DecodingFault(path: fieldPath(key), problem: "expected an array")
        }
        return try a.enumerated().map { index, element in
            guard let s = element as? String else {
                throw DecodingFault(path: "\(fieldPath(key))[\(index)]", problem: "expected a string")
            }
            return s
        }
    }

    static func isBool(_ n: NSNumber) -> Bool {
        // Foundation boxes JSON true/false as NSNumbers whose type code is "c" (char);
        // JSON integers come back as "i" or "q", fractions as "d".
        n.objCType.pointee == CChar(UInt8(ascii: "c"))
    }
}
