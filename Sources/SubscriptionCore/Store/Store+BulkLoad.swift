import Foundation

/// Bulk loading: a store written in one long run that can be rebuilt if it fails.
extension StoreUpkeep {
    /// The checkpoint interval `subdesk ingest` uses: 40 MB of WAL.
    public static let batchCheckpointPages = 10_000

    /// For a process that writes many batches in a row (`subdesk ingest` of a file): move
    /// the WAL's pages into the database every `pages` pages instead of SQLite's 1,000.
    ///
    /// A batch of 500 notifications changes about 1,000 pages, so by default every batch
    /// ends in a checkpoint: pages the next batch changes again are copied each time, and
    /// both files are synced each time. The WAL grows to `pages` × 4 KB meanwhile, and the
    /// last connection to close checkpoints what is left.
    public func checkpointEvery(pages: Int) throws { try db.checkpointEvery(pages: pages) }

    /// The page cache of a connection that writes notifications one batch or group after
    /// another (`subdesk ingest`'s writer, `serve`'s committer): 64 MiB.
    public static let writerCacheKibibytes = 65_536

    /// For such a connection: keep up to `kibibytes` of the store's pages in memory instead
    /// of SQLite's 2 MB. Each batch touches pages all over the indexes of `notifications`,
    /// `transactions`, `subscriptions` and the counts; with the default cache most are read
    /// again from the operating system by the next batch, or spilled before the commit.
    /// 30,000 notifications into a new store: 4.84 s with 2 MB, 4.48 s with 64 MiB
    /// (BENCHMARKS.md). The cache grows only as pages are read.
    public func cachePages(kibibytes: Int) throws { try db.cachePages(kibibytes: kibibytes) }

    /// Trades durability for speed while bulk-loading a store that can be rebuilt.
    ///
    /// Indexes that only speed up reads (not the unique ones, which keep rows apart) are
    /// dropped while loading and built again at the end: building one from all rows at once
    /// sorts them in a single pass, where keeping it up to date sends every insert to a
    /// random page of it.
    public func setBulkLoading(_ on: Bool) throws {
        guard let bulk = db.bulkLoad else { return }
        if on {
            try db.execute(bulk.start)
            let indexes = try db.rows(bulk.setAsideIndexes) { row in
                let r = IndexDefinition.row(row)
                return (name: r.string(.name), sql: r.string(.definition))
            }
            try store.write { for index in indexes { try db.execute("DROP INDEX \"\(index.name)\"") } }
            store.suspendedIndexes += indexes
        } else {
            let indexes = store.suspendedIndexes
            try store.write { for index in indexes { try db.execute(index.sql) } }
            store.suspendedIndexes.removeAll()
            // The search index takes in the loaded subscriptions at once, as the indexes did.
            try store.subscriptions.refreshSearchIndex()
            try db.execute(bulk.end)
        }
    }
}
