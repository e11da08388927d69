import Foundation

/// One stored body as one NDJSON line, losslessly. A body with no line break is written as it
/// is; one that spans lines (pretty-printed V1 bodies often do) is wrapped as
/// `{"subdeskExportedBody": "<the body as a JSON string>"}`, which batch `ingest` unwraps into
/// the same bytes, so an export ingested again gives the same notifications and digests.
/// Only the command line unwraps: a CGI request is always taken as the body itself.
enum ExportedBody {
    static let key = "subdeskExportedBody"

    static func line(_ body: Data) -> Data {
        guard body.contains(10) || body.contains(13), let text = String(data: body, encoding: .utf8),
              let wrapped = try? JSONSerialization.data(withJSONObject: [key: text], options: [.withoutEscapingSlashes])
        else { return body }
        return wrapped
    }

    static func unwrap(_ line: Data) -> Data {
        guard line.count > key.count + 6, line.prefix(key.count + 4) == Data("{\"\(key)\":".utf8),
              let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any], object.count == 1,
              let text = object[key] as? String else { return line }
        return Data(text.utf8)
    }
}
