import Foundation

// One binary serves every target so that a run compiles the core only once; run.sh
// names the target in SUBDESK_FUZZ_TARGET and libFuzzer calls in here.

typealias FuzzTarget = (Data) -> Void

let fuzzTargets: [String: FuzzTarget] = [
    "intake": IntakeTarget.run,
    "jws": JWSTarget.run,
    "certificate": CertificateTarget.run,
    "payload": PayloadTarget.run,
    "response": ResponseTarget.run,
    "fastcgi": FastCGITarget.run,
    "options": OptionsTarget.run,
    "http": HTTPTarget.run,
]

nonisolated(unsafe) var selectedTarget: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let name = ProcessInfo.processInfo.environment["SUBDESK_FUZZ_TARGET"] ?? ""
    guard let target = fuzzTargets[name] else {
        let known = fuzzTargets.keys.sorted().joined(separator: ", ")
        FileHandle.standardError.write(Data("SUBDESK_FUZZ_TARGET must name a target: \(known)\n".utf8))
        exit(2)
    }
    selectedTarget = target
    // Globals (roots, verifiers, stores) come to life here rather than in the first
    // input, so that the first input's figures are not all set-up.
    target(Data())
    target(FuzzFixtures.leaf)
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    selectedTarget?(data)
    return 0
}

/// The TEST ONLY root and chain from sample-data/test-ca, embedded by run.sh so that a
/// crash reproduces from the binary and the input alone.
enum FuzzFixtures {
    static func der(_ base64: String) -> Data {
        guard let data = Data(base64Encoded: base64) else { fatalError("run.sh embedded bad base64") }
        return data
    }
    static let root = der(EmbeddedTestCA.root)
    static let intermediate = der(EmbeddedTestCA.intermediate)
    static let leaf = der(EmbeddedTestCA.leaf)
    static let roots: TrustRoots = {
        do { return TrustRoots(certificates: [try X509Certificate(der: root)]) } catch { fatalError("test root: \(error)") }
    }()
    /// Inside the test CA's validity (2020-2049), so dated checks reach path validation.
    static let checkDate = Date(timeIntervalSince1970: 1_780_272_000)
}
