import Foundation
import SubscriptionCore
import TerminalUI

/// What `/metrics` answers one scrape, whoever carries it: `metrics --cgi` (a process per
/// scrape) and `serve`'s metrics listener (no process) both come here, so a scrape gets the
/// same exposition, and the same 503 when the store cannot be read, from either.
struct MetricsAnswer: Equatable {
    let status: Int
    let reason: String
    let contentType: String
    let body: String
    /// Extra header lines (`Allow: GET, HEAD`), each without its line end.
    var headers: [String] = []

    /// The CGI/1.1 response (also what a FastCGI responder writes on FCGI_STDOUT).
    var cgiText: String {
        (["Status: \(status) \(reason)", "Content-Type: \(contentType)"] + headers).joined(separator: "\r\n") + "\r\n\r\n" + body
    }

    static let exposition = "text/plain; version=0.0.4; charset=utf-8"

    /// The answer to a request with CGI variables `params`: the exposition computed from the
    /// store (200), a 405 for a method that is not GET or HEAD (a scrape never posts), or a
    /// 503 with the reason when the metrics cannot be read (Prometheus records up == 0).
    /// `serve`: what the subdesk serve whose counts go in said of its 503s (the CGI asks
    /// serve_socket; serve gives its own). `log` hears why a 503 was answered.
    static func answer(params: [String: String], context: Context, storePath: String? = nil,
                       serve: (Context) -> ServeUnavailability?, log: (String) -> Void) -> MetricsAnswer {
        let method = params["REQUEST_METHOD"] ?? "GET"
        guard method == "GET" || method == "HEAD" else {
            return MetricsAnswer(status: 405, reason: "Method Not Allowed", contentType: "text/plain; charset=utf-8",
                                 body: "metrics are read with GET\n", headers: ["Allow: GET, HEAD"])
        }
        do {
            var inputs = try MetricsCommand.inputs(context, storePath: storePath, serve: serve)
            inputs = try MetricsCommand.scoped(inputs, context)
            return MetricsAnswer(status: 200, reason: "OK", contentType: exposition, body: OnCallMetrics.exposition(inputs))
        } catch {
            log("metrics: \(error)")
            return unavailable("the store could not be read: \(error)")
        }
    }

    /// A 503 with the reason: Prometheus records a failed scrape (up == 0), which pages;
    /// never a web server's own error page.
    static func unavailable(_ reason: String) -> MetricsAnswer {
        MetricsAnswer(status: 503, reason: "Service Unavailable", contentType: "text/plain; charset=utf-8",
                      body: "subdesk metrics: \(SafeText.sanitize(reason))\n")
    }
}
