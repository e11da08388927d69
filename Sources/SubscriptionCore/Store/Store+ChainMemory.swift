import Foundation

/// The store remembers signing chains that passed a full check (`ChainMemory`). It keeps
/// what the verifier hands it and gives it back; the verifier alone decides, by the row's
/// seal, whether a row is believed.
extension Store: ChainMemory {
    public func recallChain(hash: Data, roots: Data) -> RememberedChain? {
        let row = try? db.first("""
            SELECT entry_lengths, subjects, valid_from_s, valid_until_s, seal FROM verified_chains
            WHERE chain_hash = ? AND roots_hash = ?
            """, [hash, roots]) { ($0.string(0), $0.string(1), $0.int64(2), $0.int64(3), $0.isNull(4) ? Data() : $0.data(4)) }
        guard let (lengths, subjects, from, until, seal) = row ?? nil, !seal.isEmpty else { return nil }
        let entryLengths = lengths.split(separator: ",").compactMap { Int($0) }
        guard !entryLengths.isEmpty else { return nil }
        return RememberedChain(entryLengths: entryLengths,
                               subjects: subjects.split(separator: "\n", omittingEmptySubsequences: false).map(String.init),
                               validFrom: Date(timeIntervalSince1970: TimeInterval(from)),
                               validUntil: Date(timeIntervalSince1970: TimeInterval(until)), seal: seal)
    }

    /// Best effort, undone alone when it fails (a role that may not write the table, say):
    /// a chain not remembered is only checked again.
    public func rememberChain(_ chain: RememberedChain, hash: Data, roots: Data) {
        _ = try? savepoint {
            try db.run("""
                INSERT INTO verified_chains
                    (chain_hash, roots_hash, entry_lengths, subjects, valid_from_s, valid_until_s, checked_ms, seal)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (chain_hash, roots_hash) DO UPDATE SET entry_lengths = excluded.entry_lengths,
                    subjects = excluded.subjects, valid_from_s = excluded.valid_from_s,
                    valid_until_s = excluded.valid_until_s, checked_ms = excluded.checked_ms, seal = excluded.seal
                """, [hash, roots, chain.entryLengths.map(String.init).joined(separator: ","),
                      chain.subjects.joined(separator: "\n"), Int64(chain.validFrom.timeIntervalSince1970),
                      Int64(chain.validUntil.timeIntervalSince1970), Int64(Date().timeIntervalSince1970 * 1000), chain.seal])
        }
    }
}
