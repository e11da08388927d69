import Foundation

/// Signing chains that passed a full check (`verified_chains`): kept as the verifier hands
/// them over and given back as kept; the verifier alone decides, by the row's seal, whether
/// a row is believed. The only code that names the table's columns.
struct VerifiedChainTable {
    let db: any SQLConnection

    /// The columns, in the table's order.
    enum Column: Int, StoreColumn {
        case chainHash, rootsHash, entryLengths, subjects, validFromS, validUntilS, checkedMs, seal

        func value(in c: (chain: RememberedChain, hash: Data, roots: Data, checked: Millis)) -> SQLBindable? {
            switch self {
            case .chainHash: return c.hash
            case .rootsHash: return c.roots
            case .entryLengths: return c.chain.entryLengths.map(String.init).joined(separator: ",")
            case .subjects: return c.chain.subjects.joined(separator: "\n")
            case .validFromS: return Int64(c.chain.validFrom.timeIntervalSince1970)
            case .validUntilS: return Int64(c.chain.validUntil.timeIntervalSince1970)
            case .checkedMs: return c.checked
            case .seal: return c.chain.seal
            }
        }
    }

    static let table = StoreTable<Column>("verified_chains", key: .chainHash)
    static let remembered = table.selection([.entryLengths, .subjects, .validFromS, .validUntilS, .seal])
    /// The key is the pair (chain, roots): a row already there is replaced in place.
    static let insert = table.insert()
    static let upsert = insert.sql + " ON CONFLICT (chain_hash, roots_hash) DO UPDATE SET "
        + table.columns.filter { $0 != .chainHash && $0 != .rootsHash }.map { "\(table.name($0)) = excluded.\(table.name($0))" }
            .joined(separator: ", ")

    /// The chain kept under `hash` and `roots`, if any was kept whole (with a seal).
    func recall(hash: Data, roots: Data) throws -> RememberedChain? {
        let row = try db.first("SELECT \(Self.remembered.list) FROM verified_chains WHERE chain_hash = ? AND roots_hash = ?",
                               [hash, roots]) { row in
            let r = Self.remembered.row(row)
            return (r.string(.entryLengths), r.string(.subjects), r.int64(.validFromS), r.int64(.validUntilS),
                    r.optionalData(.seal) ?? Data())
        }
        guard let (lengths, subjects, from, until, seal) = row, !seal.isEmpty else { return nil }
        let entryLengths = lengths.split(separator: ",").compactMap { Int($0) }
        guard !entryLengths.isEmpty else { return nil }
        return RememberedChain(entryLengths: entryLengths,
                               subjects: subjects.split(separator: "\n", omittingEmptySubsequences: false).map(String.init),
                               validFrom: Date(timeIntervalSince1970: TimeInterval(from)),
                               validUntil: Date(timeIntervalSince1970: TimeInterval(until)), seal: seal)
    }

    /// Keeps `chain` under `hash` and `roots`, in place of any kept there.
    func remember(_ chain: RememberedChain, hash: Data, roots: Data) throws {
        try db.run(Self.upsert, Self.insert.values((chain, hash, roots, Int64(Date().timeIntervalSince1970 * 1000))))
    }

    /// Whether any chain kept names the test CA.
    func holdTestCA() throws -> Bool {
        try db.count("SELECT count(*) FROM verified_chains WHERE subjects LIKE '%TEST ONLY%'") > 0
    }
}

/// The store remembers signing chains that passed a full check (`ChainMemory`).
extension Store: ChainMemory {
    public func recallChain(hash: Data, roots: Data) -> RememberedChain? {
        try? VerifiedChainTable(db: db).recall(hash: hash, roots: roots)
    }

    /// Best effort, undone alone when it fails (a role that may not write the table, say):
    /// a chain not remembered is only checked again.
    public func rememberChain(_ chain: RememberedChain, hash: Data, roots: Data) {
        _ = try? savepoint { try VerifiedChainTable(db: db).remember(chain, hash: hash, roots: roots) }
    }
}
