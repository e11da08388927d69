import Foundation

/// A chain check's outcome, kept beyond one process.
///
/// A CGI process answers one notification and exits, so the verifier's in-memory cache
/// never helps it: each process would check the same Apple chain again (two P-384
/// signatures and libcrypto's path validation, a sixth of the request). A verifier given a
/// `ChainMemory` (the store) and a `ChainMemoryKey` asks the memory before checking and
/// tells it after a check passes.
///
/// What the memory holds is only ever a claim: anyone who can write the store (a database
/// login, a user with write access to the SQLite file) can write a row. So each row carries
/// a `seal`, an HMAC-SHA256 under a key that lives in a file of the receiving host and never
/// in the store, over everything the verifier relies on (the chain's hash and cut, the roots
/// it was checked against, its subjects and validity window). A row whose seal does not
/// verify is a miss: the chain is checked in full, as if nothing were remembered.
public struct RememberedChain: Equatable, Sendable {
    /// Length of each x5c entry: the same bytes cut differently must not match.
    public let entryLengths: [Int]
    public let subjects: [String]
    public let validFrom: Date
    public let validUntil: Date
    /// HMAC-SHA256 of the other fields, the chain's hash and the roots' fingerprint, under
    /// the receiving host's `ChainMemoryKey`.
    public let seal: Data

    public init(entryLengths: [Int], subjects: [String], validFrom: Date, validUntil: Date, seal: Data) {
        self.entryLengths = entryLengths
        self.subjects = subjects
        self.validFrom = validFrom
        self.validUntil = validUntil
        self.seal = seal
    }
}

/// Where chain checks are remembered: keyed by the chain's SHA-256 and a value derived
/// from the key and the roots' fingerprint, so a change of roots (or of key) forgets
/// every chain, and receivers with different keys keep rows of their own.
public protocol ChainMemory: AnyObject {
    func recallChain(hash: Data, roots: Data) -> RememberedChain?
    func rememberChain(_ chain: RememberedChain, hash: Data, roots: Data)
}
