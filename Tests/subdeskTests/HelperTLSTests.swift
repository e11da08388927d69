import Foundation
import XCTest
@testable import SubscriptionCore
import SubdeskTestKit

/// subdesk-http's TLS against a real server (nginx) and a throwaway certificate authority:
/// a certificate the trusted roots sign, for the name or address dialled, is accepted and
/// its connection kept for the next requests; one the roots do not sign, one for another
/// name or address, and a server that does not speak TLS are each refused, saying why.
final class HelperTLSTests: XCTestCase {
    var dir: String!
    var nginx: pid_t = 0
    /// Ports: the good certificate, one for another name, and plain HTTP.
    var good = 0, otherName = 0, plain = 0

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "subdesk-tls-\(UUID().uuidString)"
        for sub in ["logs", "tmp", "tls"] { try FileManager.default.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true) }
        try makeAuthority()
        try makeCertificate("good", subject: "localhost", names: "DNS:localhost,IP:127.0.0.1")
        try makeCertificate("other", subject: "other.example", names: "DNS:other.example,IP:127.0.0.2")
        good = try WebServerTests.freeLoopbackPort()
        otherName = try WebServerTests.freeLoopbackPort()
        plain = try WebServerTests.freeLoopbackPort()
        let config = dir + "/nginx.conf", temp = dir + "/tmp"
        try """
            \(getuid() == 0 ? "user root;" : "")
            daemon off;
            pid \(dir!)/nginx.pid;
            error_log \(dir!)/logs/error.log;
            events { worker_connections 64; }
            http {
                client_body_temp_path \(temp)/body;
                proxy_temp_path \(temp)/proxy;
                fastcgi_temp_path \(temp)/fastcgi;
                uwsgi_temp_path \(temp)/uwsgi;
                scgi_temp_path \(temp)/scgi;
                log_format connections '$connection $request_method $uri $status';
                access_log \(dir!)/logs/access.log connections;
                server {
                    listen 127.0.0.1:\(good) ssl;
                    ssl_certificate \(dir!)/tls/good.pem;
                    ssl_certificate_key \(dir!)/tls/good.key;
                    location / { return 200 "tls ok $request_method\\n"; }
                }
                server {
                    listen 127.0.0.1:\(otherName) ssl;
                    ssl_certificate \(dir!)/tls/other.pem;
                    ssl_certificate_key \(dir!)/tls/other.key;
                    location / { return 200 "should not be read\\n"; }
                }
                server {
                    listen 127.0.0.1:\(plain);
                    location / { return 200 "plain\\n"; }
                }
            }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        nginx = try WebServerTests.spawn(try ServeWebServerTests.nginxExecutable(), ["-c", config, "-p", dir], output: dir + "/logs/nginx.out")
        let ready = Date().addingTimeInterval(15)
        while Date() < ready && ![good, otherName, plain].allSatisfy({ WebServerTests.accepts(port: $0) }) { usleep(20_000) }
        XCTAssertTrue([good, otherName, plain].allSatisfy { WebServerTests.accepts(port: $0) },
                      (try? String(contentsOfFile: dir + "/logs/error.log", encoding: .utf8)) ?? "nginx did not start")
    }

    override func tearDown() {
        if nginx > 0 {
            kill(nginx, SIGTERM)
            var status: Int32 = 0
            waitpid(nginx, &status, 0)
        }
        try? FileManager.default.removeItem(atPath: dir)
    }

    func openssl(_ arguments: [String]) throws {
        let ran = try runToEnd("/usr/bin/env", ["openssl"] + arguments)
        XCTAssertEqual(ran.status, 0, ran.output)
    }

    func makeAuthority() throws {
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", dir + "/tls/ca.key",
                     "-out", dir + "/tls/ca.pem", "-subj", "/CN=subdesk test authority", "-days", "2",
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
    }

    func makeCertificate(_ name: String, subject: String, names: String) throws {
        let key = dir + "/tls/\(name).key", request = dir + "/tls/\(name).csr", extensions = dir + "/tls/\(name).ext"
        try openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", request,
                     "-subj", "/CN=\(subject)"])
        try "subjectAltName=\(names)\nextendedKeyUsage=serverAuth\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", request, "-CA", dir + "/tls/ca.pem", "-CAkey", dir + "/tls/ca.key", "-CAcreateserial",
                     "-days", "2", "-extfile", extensions, "-out", dir + "/tls/\(name).pem"])
    }

    /// A helper of its own, started with `roots` as its trusted certificates (nil: the host's).
    func client(trusting roots: String?) -> HTTPClient {
        if let roots { setenv("SSL_CERT_FILE", roots, 1) } else { unsetenv("SSL_CERT_FILE") }
        let helper = HTTPHelper()
        addTeardownBlock { unsetenv("SSL_CERT_FILE") }
        return HTTPClient(policy: HTTPPolicy(timeout: 10, maxAttempts: 1, initialBackoff: 0.01, maxBackoff: 0.01, jitter: 0),
                          maxConnectionsPerHost: 2, helper: helper)
    }

    func send(_ client: HTTPClient, _ url: String, method: String = "GET") -> Result<HTTPResponse, Error> {
        Result { try client.send(HTTPRequest(method: method, url: URL(string: url)!, body: method == "POST" ? Data("{}".utf8) : nil)) }
    }

    func refusal(_ result: Result<HTTPResponse, Error>) -> String {
        switch result {
        case .success(let response): return "answered \(response.status)"
        case .failure(let error): return "\(error)"
        }
    }

    func testACertificateTheRootsSignForTheNameDialledIsAcceptedAndItsConnectionKept() throws {
        let client = client(trusting: dir + "/tls/ca.pem")
        for (i, url) in ["https://localhost:\(good)/a", "https://127.0.0.1:\(good)/b"].enumerated() {
            for method in ["GET", "POST", "GET"] {
                let response = try send(client, url, method: method).get()
                XCTAssertEqual(response.status, 200, url)
                XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "tls ok \(method)\n", url)
            }
            // Each host's three requests went over one connection (nginx numbers them).
            let deadline = Date().addingTimeInterval(5)
            var lines: [Substring] = []
            while Date() < deadline {
                lines = ((try? String(contentsOfFile: dir + "/logs/access.log", encoding: .utf8)) ?? "").split(separator: "\n")
                if lines.count >= 3 * (i + 1) { break }
                usleep(20_000)
            }
            let these = lines.dropFirst(3 * i).prefix(3)
            XCTAssertEqual(these.count, 3, lines.joined(separator: "\n"))
            XCTAssertEqual(Set(these.map { $0.split(separator: " ")[0] }).count, 1, "one kept connection: \(these)")
        }
    }

    func testACertificateTheRootsDoNotSignIsRefused() {
        let reason = refusal(send(client(trusting: nil), "https://localhost:\(good)/"))
        XCTAssertTrue(reason.contains("TLS failed (unable to get local issuer certificate)"), reason)
    }

    func testACertificateForAnotherNameOrAddressIsRefused() {
        let client = client(trusting: dir + "/tls/ca.pem")
        let byName = refusal(send(client, "https://localhost:\(otherName)/"))
        XCTAssertTrue(byName.contains("TLS failed (hostname mismatch)"), byName)
        let byAddress = refusal(send(client, "https://127.0.0.1:\(otherName)/"))
        XCTAssertTrue(byAddress.contains("TLS failed (IP address mismatch)"), byAddress)
    }

    func testAServerThatDoesNotSpeakTLSIsRefusedOnAnHTTPSURL() {
        let client = client(trusting: dir + "/tls/ca.pem")
        let reason = refusal(send(client, "https://127.0.0.1:\(plain)/"))
        XCTAssertTrue(reason.contains("TLS failed ("), reason)
        XCTAssertEqual(try send(client, "http://127.0.0.1:\(plain)/").get().status, 200)
    }
}
