// swift-tools-version:6.0
import PackageDescription

// No package dependencies by design: SQLite, ncursesw, libcrypto, libssl and libpq come in
// as system library targets, everything else is Foundation.
let package = Package(
    name: "subdesk",
    products: [
        .library(name: "SubscriptionCore", targets: ["SubscriptionCore"]),
        .executable(name: "subdesk", targets: ["subdesk"]),
        .executable(name: "subdesk-bench", targets: ["subdesk-bench"]),
        // HTTP (HTTP/1.1, OpenSSL's TLS) for revalidation and the relay, in a helper process
        // that subdesk starts on its first request: nothing a server sends is parsed beside
        // the store, and subdesk never links libssl.
        .executable(name: "subdesk-http", targets: ["subdesk-http"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CNCurses", path: "Sources/CNCurses",
                       providers: [.apt(["libncurses-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ",
                       providers: [.apt(["libpq-dev"])]),
        // OpenSSL's TLS (libssl), for subdesk-http alone.
        .systemLibrary(name: "CLibSSL", path: "Sources/CLibSSL",
                       providers: [.apt(["libssl-dev"])]),

        // The commit, build time and linking deploy/package.sh gives the build ("unknown" otherwise).
        .target(name: "CBuildInfo"),
        .target(name: "SubscriptionCore", dependencies: ["CSQLite", "COpenSSL", "CLibPQ", "HelperWire", "CBuildInfo"],
                exclude: ["Store/README.md"]),
        // The demo store, the scenarios that build it and the large-store generator: for the
        // demo commands, the benchmark and the tests; in no product.
        .target(name: "SubdeskScenarios", dependencies: ["SubscriptionCore"]),
        // The frames subdesk and subdesk-http exchange; shared by both, linked into both.
        .target(name: "HelperWire"),
        .target(name: "TerminalUI"),
        // The FastCGI wire format `subdesk serve` speaks to the web server: pure Swift, no I/O.
        .target(name: "FastCGI"),
        .target(name: "Dashboard", dependencies: ["SubscriptionCore", "TerminalUI"]),
        .executableTarget(name: "subdesk",
                          dependencies: ["SubscriptionCore", "SubdeskScenarios", "TerminalUI", "Dashboard", "CNCurses", "FastCGI"]),
        .executableTarget(name: "subdesk-bench", dependencies: ["SubscriptionCore", "SubdeskScenarios", "TerminalUI", "Dashboard",
                                                                "FakeApple", "SubdeskTestSupport", "FastCGI"]),
        // A local HTTP server that plays Apple's App Store Server API, for the tests and the
        // benchmark's backfill figure; in no product.
        .target(name: "FakeApple"),
        // Where the tests and the benchmark open their stores (in memory, or a fresh
        // PostgreSQL schema when SUBDESK_TEST_POSTGRES is set); in no product.
        .target(name: "SubdeskTestSupport", dependencies: ["SubscriptionCore"]),
        // The tests' side of it (XCTest): which tests depend on the engine, checked as they open
        // stores, and the list the PostgreSQL pass runs (scripts/test-postgres); in no product.
        .target(name: "SubdeskTestKit", dependencies: ["SubdeskTestSupport", "SubscriptionCore", "CTestKitStart"]),
        // Starts the kit's observer when the test binary loads, before the first test.
        .target(name: "CTestKitStart"),
        // HTTP/1.1 responses read from bytes and requests written as bytes: pure Swift, no I/O.
        .target(name: "HTTP1"),
        // Shares no code with SubscriptionCore: only the socket's wire format.
        .executableTarget(name: "subdesk-http", dependencies: ["HelperWire", "HTTP1", "CLibSSL"]),

        .testTarget(name: "SubscriptionCoreTests", dependencies: ["SubscriptionCore", "SubdeskScenarios", "SubdeskTestKit", "FakeApple"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "TerminalUITests", dependencies: ["TerminalUI"]),
        .testTarget(name: "FastCGITests", dependencies: ["FastCGI"]),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTP1"]),
        .testTarget(name: "DashboardTests", dependencies: ["Dashboard", "TerminalUI", "SubscriptionCore", "SubdeskScenarios",
                                                           "SubdeskTestKit", "FakeApple"],
                    exclude: ["Snapshots"]),
        .testTarget(name: "subdeskTests", dependencies: ["SubscriptionCore", "SubdeskScenarios", "SubdeskTestKit", "subdesk", "FakeApple", "FastCGI"]),
    ],
    swiftLanguageModes: [.v5]
)
