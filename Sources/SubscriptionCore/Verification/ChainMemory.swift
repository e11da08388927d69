import Foundation

/// A chain check's outcome, kept beyond one process.
///
/// A CGI process answers one notification and exits, so the verifier's in-memory cache
/// never helps it: each process would check the same Apple chain again (two P-384
/// signatures and libcrypto's path validation, a sixth of the request). A verifier given a
/// `ChainMemory` (the store) asks it before checking and tells it after a check passes.
public struct RememberedChain: Equatable, Sendable {
    /// Length of each x5c entry: the same bytes cut differently must not match.
    public let entryLengths: [Int]
    public let subjects: [String]
    public let validFrom: Date
    public let validUntil: Date

    public init(entryLengths: [Int], subjects: [String], validFrom: Date, validUntil: Date) {
        self.entryLengths = entryLengths
        self.subjects = subjects
        self.validFrom = validFrom
        self.validUntil = validUntil
    }
}

/// Where chain checks are remembered: keyed by the chain's SHA-256 and the fingerprint
/// of the roots it was checked against, so a change of roots forgets every chain.
public protocol ChainMemory: AnyObject {
    func recallChain(hash: Data, roots: Data) -> RememberedChain?
    func rememberChain(_ chain: RememberedChain, hash: Data, roots: Data)
}
