/// The schema, as numbered migrations. A migration is never edited once shipped: add one.
enum Migrations {
    static let all: [(version: Int, sql: String)] = [
        (1, """
        CREATE TABLE subscribers (
            id INTEGER PRIMARY KEY,
            user_id TEXT UNIQUE,
            app_account_token TEXT UNIQUE,
            created_ms INTEGER NOT NULL
        );
        CREATE TABLE subscriptions (
            original_transaction_id TEXT PRIMARY KEY,
            subscriber_id INTEGER NOT NULL REFERENCES subscribers(id),
            product_id TEXT NOT NULL,
            status INTEGER NOT NULL,
            entitled INTEGER NOT NULL,
            expires_ms INTEGER,
            purchase_ms INTEGER,
            original_purchase_ms INTEGER,
            latest_transaction_id TEXT,
            auto_renew INTEGER NOT NULL,
            auto_renew_product_id TEXT,
            pending_change_kind TEXT,
            pending_change_product_id TEXT,
            grace_expires_ms INTEGER,
            billing_retry INTEGER NOT NULL,
            expiration_intent INTEGER,
            price_increase_status INTEGER,
            offer_type INTEGER,
            offer_identifier TEXT,
            offer_discount_type TEXT,
            is_trial INTEGER NOT NULL,
            ownership TEXT NOT NULL,
            environment TEXT NOT NULL,
            app_account_token TEXT,
            upgraded_from TEXT,
            revoked_transactions TEXT,
            last_event_ms INTEGER,
            last_notification_type TEXT,
            updated_ms INTEGER NOT NULL,
            -- This subscription's share of metric_buckets (MetricContributions, encoded).
            metrics BLOB
        );
        CREATE INDEX subscriptions_subscriber ON subscriptions(subscriber_id);
        CREATE INDEX subscriptions_product ON subscriptions(product_id, original_transaction_id);
        CREATE INDEX subscriptions_status_expires ON subscriptions(status, expires_ms, original_transaction_id);
        CREATE INDEX subscriptions_expires ON subscriptions(IFNULL(expires_ms, 0), original_transaction_id);
        CREATE INDEX subscriptions_last_event ON subscriptions(IFNULL(last_event_ms, 0), original_transaction_id);
        CREATE INDEX subscriptions_status_page ON subscriptions(status, IFNULL(expires_ms, 0), original_transaction_id);
        CREATE INDEX subscriptions_token ON subscriptions(app_account_token);

        CREATE TABLE transactions (
            transaction_id TEXT PRIMARY KEY,
            original_transaction_id TEXT NOT NULL,
            product_id TEXT NOT NULL,
            subscription_group TEXT,
            purchase_ms INTEGER NOT NULL,
            original_purchase_ms INTEGER,
            expires_ms INTEGER,
            revocation_ms INTEGER,
            revocation_reason INTEGER,
            is_upgraded INTEGER NOT NULL,
            offer_type INTEGER,
            offer_identifier TEXT,
            offer_discount_type TEXT,
            ownership TEXT NOT NULL,
            transaction_reason TEXT,
            price INTEGER,
            currency TEXT,
            environment TEXT NOT NULL,
            app_account_token TEXT,
            signed_ms INTEGER NOT NULL,
            web_order_line_item_id TEXT,
            bundle_id TEXT,
            type TEXT,
            storefront TEXT
        );
        CREATE INDEX transactions_original ON transactions(original_transaction_id);
        CREATE INDEX transactions_purchase ON transactions(purchase_ms);

        CREATE TABLE renewal_info (
            original_transaction_id TEXT PRIMARY KEY,
            product_id TEXT,
            auto_renew_product_id TEXT,
            auto_renew INTEGER NOT NULL,
            expiration_intent INTEGER,
            billing_retry INTEGER NOT NULL,
            grace_expires_ms INTEGER,
            price_increase_status INTEGER,
            offer_type INTEGER,
            offer_identifier TEXT,
            renewal_ms INTEGER,
            renewal_price INTEGER,
            currency TEXT,
            environment TEXT NOT NULL,
            signed_ms INTEGER NOT NULL
        );

        CREATE TABLE notifications (
            id INTEGER PRIMARY KEY,
            notification_uuid TEXT NOT NULL UNIQUE,
            version INTEGER NOT NULL,
            type TEXT NOT NULL,
            subtype TEXT,
            signed_ms INTEGER NOT NULL,
            received_ms INTEGER NOT NULL,
            original_transaction_id TEXT,
            transaction_id TEXT,
            product_id TEXT,
            environment TEXT,
            ownership TEXT,
            body_sha256 TEXT NOT NULL,
            -- 0: the body as received; 1: CompactBody format 1 (headers in jws_headers).
            body_format INTEGER NOT NULL DEFAULT 0,
            body BLOB NOT NULL,
            source TEXT
        );
        -- JWS headers (alg and certificate chain), stored once however many bodies carry them.
        CREATE TABLE jws_headers (
            id INTEGER PRIMARY KEY,
            segment TEXT NOT NULL UNIQUE
        );
        CREATE INDEX notifications_original ON notifications(original_transaction_id, signed_ms);
        CREATE INDEX notifications_received ON notifications(received_ms);
        CREATE INDEX notifications_signed ON notifications(signed_ms);
        CREATE INDEX notifications_digest ON notifications(body_sha256);

        CREATE TABLE quarantine (
            id INTEGER PRIMARY KEY,
            received_ms INTEGER NOT NULL,
            reason TEXT NOT NULL,
            body BLOB NOT NULL,
            body_sha256 TEXT NOT NULL,
            source TEXT
        );
        CREATE INDEX quarantine_received ON quarantine(received_ms);

        -- Daily counts' aggregates per hour bucket: notification counts (n:TYPE/SUBTYPE)
        -- and period starts, ends and level changes (p:...), per segment.
        CREATE TABLE metric_buckets (
            bucket INTEGER NOT NULL,
            key TEXT NOT NULL,
            segment TEXT NOT NULL,
            delta INTEGER NOT NULL,
            PRIMARY KEY (bucket, key, segment)
        ) WITHOUT ROWID;
        -- How many subscriptions have each status, kept with every save, so the
        -- dashboard's status tabs need not count a million rows at launch.
        CREATE TABLE status_counts (
            status INTEGER PRIMARY KEY,
            count INTEGER NOT NULL
        );

        -- Levels at a range's start sum one key's history; this covers that read.
        CREATE INDEX metric_buckets_key ON metric_buckets(key, segment, bucket, delta);

        -- Every body's outcome, in arrival order, for the live feed.
        CREATE TABLE intake_log (
            id INTEGER PRIMARY KEY,
            received_ms INTEGER NOT NULL,
            result TEXT NOT NULL,
            notification_uuid TEXT,
            type TEXT,
            subtype TEXT,
            original_transaction_id TEXT,
            product_id TEXT,
            environment TEXT,
            detail TEXT
        );
        CREATE INDEX intake_log_received ON intake_log(received_ms);
        """),
        (2, """
        -- Operator actions, append-only: the database itself refuses changes.
        CREATE TABLE audit_log (
            id INTEGER PRIMARY KEY,
            at_ms INTEGER NOT NULL,
            operator TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT,
            reason TEXT,
            outcome TEXT NOT NULL,
            detail TEXT
        );
        CREATE INDEX audit_log_target ON audit_log(target, at_ms);
        CREATE INDEX audit_log_at ON audit_log(at_ms);
        CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
            BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
        CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
            BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;

        CREATE TABLE overrides (
            id INTEGER PRIMARY KEY,
            original_transaction_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('grant', 'revoke')),
            until_ms INTEGER,
            reason TEXT NOT NULL,
            operator TEXT NOT NULL,
            created_ms INTEGER NOT NULL,
            lifted_ms INTEGER,
            lifted_by TEXT,
            lift_reason TEXT
        );
        CREATE INDEX overrides_target ON overrides(original_transaction_id, created_ms);

        -- The latest receipt per subscription, for verifyReceipt revalidation.
        CREATE TABLE receipts (
            original_transaction_id TEXT PRIMARY KEY,
            latest_receipt TEXT NOT NULL,
            updated_ms INTEGER NOT NULL
        );
        """),
        (3, """
        -- A quarantined body is never deleted; a successful replay marks it resolved.
        ALTER TABLE quarantine ADD COLUMN resolved_ms INTEGER;
        ALTER TABLE quarantine ADD COLUMN resolution TEXT;
        """),
        (4, """
        -- Signing chains that passed a full check, so a later process (a CGI request)
        -- need not check them again: keyed by the chain's SHA-256 and the roots'.
        CREATE TABLE verified_chains (
            chain_hash BLOB NOT NULL,
            roots_hash BLOB NOT NULL,
            entry_lengths TEXT NOT NULL,
            subjects TEXT NOT NULL,
            valid_from_s INTEGER NOT NULL,
            valid_until_s INTEGER NOT NULL,
            checked_ms INTEGER NOT NULL,
            PRIMARY KEY (chain_hash, roots_hash)
        );
        """),
        (5, """
        -- subscriptions_status_page (status, IFNULL(expires_ms, 0), id) serves every query
        -- this one did; one index fewer to keep up on every subscription write.
        DROP INDEX IF EXISTS subscriptions_status_expires;
        """),
        (6, """
        -- INSERT OR REPLACE (and REPLACE) would delete an audit row without firing the
        -- delete trigger; an insert naming an id that exists is refused before that happens.
        CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log
            WHEN NEW.id IS NOT NULL AND EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id)
            BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;

        -- A rejected body seen again is counted, not stored again; one over the size limit or
        -- past the quarantine's budget keeps a prefix (or nothing) with its true length.
        ALTER TABLE quarantine ADD COLUMN body_bytes INTEGER;
        ALTER TABLE quarantine ADD COLUMN times_seen INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE quarantine ADD COLUMN last_seen_ms INTEGER;
        UPDATE quarantine SET body_bytes = length(body), last_seen_ms = received_ms;
        CREATE INDEX quarantine_digest ON quarantine(body_sha256, resolved_ms);
        """),
        (7, """
        -- The signedDate of the notification that carried each stored version: the second
        -- key of the order on versions (RecordVersionOrder), after the record's own.
        ALTER TABLE transactions ADD COLUMN notification_signed_ms INTEGER;
        ALTER TABLE renewal_info ADD COLUMN notification_signed_ms INTEGER;
        -- Where Apple's whole signed payload of a stored version can be read: the notification
        -- that carried it, or (for a version from an API response) its JSON bytes.
        ALTER TABLE transactions ADD COLUMN source_uuid TEXT;
        ALTER TABLE transactions ADD COLUMN payload BLOB;
        ALTER TABLE renewal_info ADD COLUMN source_uuid TEXT;
        ALTER TABLE renewal_info ADD COLUMN payload BLOB;
        -- RESCIND_CONSENT names the app transaction; this finds the subscription it concerns.
        ALTER TABLE transactions ADD COLUMN app_transaction_id TEXT;
        CREATE INDEX transactions_app_transaction ON transactions(app_transaction_id) WHERE app_transaction_id IS NOT NULL;
        """),
        (8, """
        -- Facts about the store itself: `kind = demo` marks a store `subdesk demo` built, the
        -- only kind it may replace.
        CREATE TABLE store_facts (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """),
        (9, """
        -- Substring search over what people type to find a subscription: its original
        -- transaction id, product, the owner's user id and token. A trigram index answers
        -- `premium` or an id's tail without reading every row. One row per subscription,
        -- under the subscription's rowid. The text is lower-cased before it is indexed, so
        -- the index compares exactly; it keeps which rows hold a trigram and not where
        -- (detail none), which is all GLOB needs.
        CREATE VIRTUAL TABLE subscription_search USING fts5(text, tokenize = 'trigram case_sensitive 1',
                                                           detail = 'none', columnsize = 0);
        INSERT INTO subscription_search (rowid, text)
            SELECT s.rowid, \(Migrations.searchText("s", "b")) FROM subscriptions s JOIN subscribers b ON b.id = s.subscriber_id;
        -- The index's trigrams: one or two typed characters are found through the trigrams
        -- that start with them.
        CREATE VIRTUAL TABLE subscription_search_terms USING fts5vocab(subscription_search, 'row');
        -- Subscriptions whose search text may have changed since they were indexed. Intake
        -- only notes the rowid here (triggers); the index catches up when it is next asked
        -- (Store.refreshSearchIndex), so a notification never pays for tokenizing. A renewal
        -- (a new latest transaction) changes nothing searched and notes nothing.
        CREATE TABLE search_pending (subscription INTEGER PRIMARY KEY);
        CREATE TRIGGER subscription_search_insert AFTER INSERT ON subscriptions BEGIN
            INSERT OR IGNORE INTO search_pending VALUES (NEW.rowid);
        END;
        CREATE TRIGGER subscription_search_update AFTER UPDATE OF product_id, subscriber_id ON subscriptions
            WHEN OLD.product_id IS NOT NEW.product_id OR OLD.subscriber_id IS NOT NEW.subscriber_id
        BEGIN
            INSERT OR IGNORE INTO search_pending VALUES (NEW.rowid);
        END;
        CREATE TRIGGER subscription_search_delete AFTER DELETE ON subscriptions BEGIN
            INSERT OR IGNORE INTO search_pending VALUES (OLD.rowid);
        END;
        CREATE TRIGGER subscriber_search_update AFTER UPDATE OF user_id, app_account_token ON subscribers
            WHEN OLD.user_id IS NOT NEW.user_id OR OLD.app_account_token IS NOT NEW.app_account_token
        BEGIN
            INSERT OR IGNORE INTO search_pending SELECT rowid FROM subscriptions WHERE subscriber_id = NEW.id;
        END;
        """),
        (10, """
        -- Where each intake outcome came from, so the feed can mark backfilled notifications.
        ALTER TABLE intake_log ADD COLUMN source TEXT;
        -- A backfill from Get Notification History: its window, how far it got (the token of
        -- the next page, kept with each page's notifications so a run resumes exactly), and
        -- what it found.
        CREATE TABLE backfill_runs (
            id INTEGER PRIMARY KEY,
            environment TEXT NOT NULL,
            since_ms INTEGER NOT NULL,
            until_ms INTEGER NOT NULL,
            only_failures INTEGER NOT NULL,
            operator TEXT NOT NULL,
            started_ms INTEGER NOT NULL,
            finished_ms INTEGER,
            next_page TEXT,
            pages INTEGER NOT NULL DEFAULT 0,
            new INTEGER NOT NULL DEFAULT 0,
            duplicates INTEGER NOT NULL DEFAULT 0,
            rejected INTEGER NOT NULL DEFAULT 0
        );
        -- Notifications Apple says it sent that first reached this store through a backfill,
        -- with Apple's delivery attempts as it reported them (JSON).
        CREATE TABLE delivery_gaps (
            notification_uuid TEXT PRIMARY KEY,
            backfill_run INTEGER NOT NULL REFERENCES backfill_runs(id),
            send_attempts TEXT NOT NULL,
            found_ms INTEGER NOT NULL
        );
        """),
        (11, """
        -- Renewal-date extensions asked of Apple: one subscription's, or every active
        -- subscriber's of a product (original_transaction_id NULL), with what Apple answered.
        CREATE TABLE renewal_extensions (
            id INTEGER PRIMARY KEY,
            request_identifier TEXT NOT NULL UNIQUE,
            original_transaction_id TEXT,
            product_id TEXT,
            storefronts TEXT,
            days INTEGER NOT NULL,
            reason_code INTEGER NOT NULL,
            reason TEXT NOT NULL,
            operator TEXT NOT NULL,
            requested_ms INTEGER NOT NULL,
            outcome TEXT NOT NULL,
            effective_ms INTEGER,
            succeeded INTEGER,
            failed INTEGER,
            completed_ms INTEGER
        );
        CREATE INDEX renewal_extensions_target ON renewal_extensions(original_transaction_id, requested_ms);
        """),
        (12, """
        -- Refund requests: every CONSUMPTION_REQUEST opens one (Apple wants the consumption
        -- information within 12 hours of asking); the first REFUND or REFUND_DECLINED of the
        -- same transaction signed at or after it closes it, whichever arrives first.
        CREATE TABLE refund_requests (
            notification_uuid TEXT PRIMARY KEY,
            original_transaction_id TEXT,
            transaction_id TEXT,
            environment TEXT,
            requested_ms INTEGER NOT NULL,
            -- The last answer sent, as JSON, who sent it, when, and what Apple said to it
            -- ('accepted' or 'refused: ...').
            answer TEXT,
            answered_by TEXT,
            answered_ms INTEGER,
            answer_outcome TEXT,
            -- When subdesk noticed (and audited) that the deadline passed unanswered.
            missed_ms INTEGER,
            closed_ms INTEGER,
            closed_by TEXT,
            closing_uuid TEXT
        );
        CREATE INDEX refund_requests_queue ON refund_requests(closed_ms, requested_ms);
        CREATE INDEX refund_requests_transaction ON refund_requests(transaction_id);
        CREATE TRIGGER refund_request_open AFTER INSERT ON notifications WHEN NEW.type = 'CONSUMPTION_REQUEST' BEGIN
            INSERT OR IGNORE INTO refund_requests (notification_uuid, original_transaction_id, transaction_id, environment, requested_ms)
            VALUES (NEW.notification_uuid, NEW.original_transaction_id, NEW.transaction_id, NEW.environment, NEW.signed_ms);
            UPDATE refund_requests SET (closed_ms, closed_by, closing_uuid) = (
                SELECT signed_ms, type, notification_uuid FROM notifications
                WHERE original_transaction_id = NEW.original_transaction_id AND signed_ms >= NEW.signed_ms
                  AND transaction_id = NEW.transaction_id AND type IN ('REFUND', 'REFUND_DECLINED')
                ORDER BY signed_ms LIMIT 1)
            WHERE notification_uuid = NEW.notification_uuid AND EXISTS (
                SELECT 1 FROM notifications
                WHERE original_transaction_id = NEW.original_transaction_id AND signed_ms >= NEW.signed_ms
                  AND transaction_id = NEW.transaction_id AND type IN ('REFUND', 'REFUND_DECLINED'));
        END;
        CREATE TRIGGER refund_request_close AFTER INSERT ON notifications WHEN NEW.type IN ('REFUND', 'REFUND_DECLINED') BEGIN
            UPDATE refund_requests SET closed_ms = NEW.signed_ms, closed_by = NEW.type, closing_uuid = NEW.notification_uuid
            WHERE transaction_id = NEW.transaction_id AND closed_ms IS NULL AND requested_ms <= NEW.signed_ms;
        END;
        INSERT OR IGNORE INTO refund_requests (notification_uuid, original_transaction_id, transaction_id, environment, requested_ms)
            SELECT notification_uuid, original_transaction_id, transaction_id, environment, signed_ms
            FROM notifications WHERE type = 'CONSUMPTION_REQUEST';
        UPDATE refund_requests SET (closed_ms, closed_by, closing_uuid) = (
            SELECT n.signed_ms, n.type, n.notification_uuid FROM notifications n
            WHERE n.original_transaction_id = refund_requests.original_transaction_id AND n.signed_ms >= refund_requests.requested_ms
              AND n.transaction_id = refund_requests.transaction_id AND n.type IN ('REFUND', 'REFUND_DECLINED')
            ORDER BY n.signed_ms LIMIT 1);
        """),
        (13, """
        -- Subscriptions whose share of the counts predates the metrics derived from
        -- transactions (new paid, churn, refunds...): Store.catchUpMetrics recomputes them.
        CREATE TABLE metrics_pending (original_transaction_id TEXT PRIMARY KEY) WITHOUT ROWID;
        INSERT INTO metrics_pending SELECT original_transaction_id FROM subscriptions;
        """),
        (14, """
        -- Every metric now comes from each subscription's share (churn by reason, auto-renew
        -- off and on, revocations, product changes, billing trouble), with each entry's
        -- product, storefront and offer: recompute them all.
        INSERT OR IGNORE INTO metrics_pending SELECT original_transaction_id FROM subscriptions;
        """),
        (15, """
        -- The counts by product, subscription group, storefront and offer type: every
        -- aggregate once per dimension, with its value. Kept up by Store.catchUpSegments
        -- from the subscriptions noted pending (with the share the aggregates last took),
        -- when a report by segment asks.
        CREATE TABLE metric_segments (
            dimension TEXT NOT NULL,
            value TEXT NOT NULL,
            key TEXT NOT NULL,
            segment TEXT NOT NULL,
            bucket INTEGER NOT NULL,
            delta INTEGER NOT NULL,
            PRIMARY KEY (dimension, value, key, segment, bucket)
        ) WITHOUT ROWID;
        CREATE TABLE metric_segments_pending (original_transaction_id TEXT PRIMARY KEY, applied BLOB) WITHOUT ROWID;
        INSERT INTO metric_segments_pending SELECT original_transaction_id, NULL FROM subscriptions;
        """),
        (16, """
        -- Remembered chain checks are believed only through a seal (an HMAC under a key kept
        -- outside the store, ChainMemoryKey): rows from before carry none, so they go.
        DELETE FROM verified_chains;
        ALTER TABLE verified_chains ADD COLUMN seal BLOB;
        """),
        (17, """
        -- Consent withdrawals (RESCIND_CONSENT) are read from the notifications themselves, on
        -- every subscriber list and feed refresh: this keeps that from reading every row.
        CREATE INDEX IF NOT EXISTS notifications_rescind ON notifications(signed_ms) WHERE type = 'RESCIND_CONSENT';
        """),
        (18, """
        -- Every intake outcome counted by environment, type, outcome and kind of refusal, with
        -- the latest arrival: the on-call metrics read these few rows on every scrape instead
        -- of the whole intake log, and they only ever grow, as Prometheus counters must.
        CREATE TABLE intake_counts (
            environment TEXT NOT NULL,
            type TEXT NOT NULL,
            outcome TEXT NOT NULL,
            reason TEXT NOT NULL,
            count INTEGER NOT NULL,
            last_ms INTEGER NOT NULL,
            PRIMARY KEY (environment, type, outcome, reason)
        ) WITHOUT ROWID;
        \(Migrations.intakeCountsBackfill(dialect: .sqlite))
        -- The last sweep, the last day's failed revalidations: found without reading the log.
        CREATE INDEX audit_log_action ON audit_log(action, at_ms);
        """),
        (19, """
        -- Each subscription's share now holds its place in the cohort reports (retention,
        -- realized lifetime value, trial conversion), kept in metric_buckets under `c:` keys:
        -- recompute every share.
        INSERT OR IGNORE INTO metrics_pending SELECT original_transaction_id FROM subscriptions;
        """),
        (20, """
        -- Shares follow five corrected rules (a billing recovery within grace continues the
        -- run, a comeback counts in every period it overlaps, a prorated refund's money is in
        -- the period it happened, a trial renewed after billing retry started with the trial,
        -- family-shared access moves no money): recompute every share.
        INSERT OR IGNORE INTO metrics_pending SELECT original_transaction_id FROM subscriptions;
        """),
        (21, """
        -- PostgreSQL's migration 21 gives the roles a function to drop an empty subscriber;
        -- SQLite has no roles, and drops it with a plain DELETE: nothing changes here.
        SELECT 1;
        """),
        (22, """
        -- Each refusal's kind (RejectionClass), stated where intake refuses a body and stored
        -- beside its text, which is never read back for it. Rows from before get the kind
        -- their reason's words gave.
        \(Migrations.refusalKinds(dialect: .sqlite))
        """),
        (24, """
        \(Migrations.segmentCatchUp(dialect: .sqlite))
        """),
    ]

    /// Counts the intake log as it stands, as `Store.countIntake` counts each new outcome
    /// (a missing environment or type is counted as '').
    static func intakeCountsBackfill(dialect: SQLDialect) -> String {
        """
        INSERT INTO intake_counts (environment, type, outcome, reason, count, last_ms)
            SELECT coalesce(environment, ''), coalesce(type, ''), result,
                   CASE WHEN result = 'rejected' THEN \(rejectionClass("detail", dialect: dialect)) ELSE '' END,
                   count(*), max(received_ms)
            FROM intake_log GROUP BY 1, 2, 3, 4;
        """
    }

    /// Migration 22 on either engine: the kind column of the quarantine and the intake log,
    /// filled for the rows stored before it.
    static func refusalKinds(dialect: SQLDialect) -> String {
        let text = dialect == .postgres ? "TEXT COLLATE \"C\"" : "TEXT"
        return """
        ALTER TABLE quarantine ADD COLUMN reason_kind \(text) NOT NULL DEFAULT 'other';
        UPDATE quarantine SET reason_kind = \(rejectionClass("reason", dialect: dialect));
        ALTER TABLE intake_log ADD COLUMN reason_kind \(text);
        UPDATE intake_log SET reason_kind = \(rejectionClass("detail", dialect: dialect)) WHERE result = 'rejected';
        """
    }

    /// How a refusal's kind was told from its words before intake stated it, first match
    /// winning (an oversized body's reason starts with `body:` like a malformed one's). Kept
    /// only for the rows stored before migration 22, and for migration 18, which counted the
    /// intake log as it stood; nothing else reads a kind from a reason.
    private static let legacyMarkers: [(RejectionClass, [String])] = [
        (.oversized, ["-byte limit"]),
        (.conflict, ["already stored with different content"]),
        (.revoked, ["revoked"]),
        (.signature, ["signature", "x5c", "certificate", "configured root", "chain", "ES256", "alg "]),
        (.policy, ["bundleId", "environment", "appAppleId", "shared secret", "V1 bodies", "not accepted"]),
        (.malformed, ["body:", "JSON", "base64", "signedPayload", "decode"]),
    ]

    /// Migration 24 on either engine: the by-segment catch-up writes each aggregate row once
    /// for many subscriptions. A note it has taken (`claimed` 1) keeps the share the
    /// aggregates held (`applied`) and the share it sums (`taken`); `metric_segments_catchup`
    /// (one row, while a catch-up runs) names who runs it, when it last wrote, its phase and
    /// the last aggregate row written (`through_*`). Store+Metrics.swift states the invariant.
    static func segmentCatchUp(dialect: SQLDialect) -> String {
        let text = dialect == .postgres ? "TEXT COLLATE \"C\"" : "TEXT"
        let blob = dialect == .postgres ? "BYTEA" : "BLOB"
        let integer = dialect == .postgres ? "BIGINT" : "INTEGER"
        return """
        ALTER TABLE metric_segments_pending ADD COLUMN claimed \(integer) NOT NULL DEFAULT 0;
        ALTER TABLE metric_segments_pending ADD COLUMN taken \(blob);
        CREATE TABLE metric_segments_catchup (
            id \(integer) PRIMARY KEY CHECK (id = 1),
            owner \(text) NOT NULL,
            heartbeat_ms \(integer) NOT NULL,
            phase \(text) NOT NULL,
            through_dimension \(text),
            through_value \(text),
            through_key \(text),
            through_segment \(text),
            through_bucket \(integer)
        )\(dialect == .postgres ? "" : " WITHOUT ROWID");
        """
    }

    /// `legacyMarkers` in SQL over `column`. Case-sensitive, as Swift's `contains` was
    /// (SQLite's LIKE is not).
    static func rejectionClass(_ column: String, dialect: SQLDialect) -> String {
        var sql = "CASE"
        for (kind, words) in legacyMarkers {
            let tests = words.map { "\(dialect.find)(\(column), '\($0.replacingOccurrences(of: "'", with: "''"))') > 0" }
            sql += " WHEN " + tests.joined(separator: " OR ") + " THEN '\(kind.rawValue)'"
        }
        return sql + " ELSE 'other' END"
    }

    /// What search matches in, for a subscription `s` and its subscriber `b` (SQL names):
    /// the fields one to a line, lower-cased (ASCII, as SQLite's lower() does), so a typed
    /// text never matches across two fields. Two line ends close it, so every character
    /// of every field starts a trigram.
    static func searchText(_ s: String, _ b: String, dialect: SQLDialect = .sqlite) -> String {
        let lineEnd = dialect.lineFeed
        return """
        lower(\(s).original_transaction_id || \(lineEnd) || \(s).product_id
              || \(lineEnd) || COALESCE(\(b).user_id, '') || \(lineEnd) || COALESCE(\(b).app_account_token, '') || \(lineEnd) || \(lineEnd))
        """
    }

    static var latestVersion: Int { all.last?.version ?? 0 }

    /// The triggers that keep the audit log append-only; `doctor` reports any that is missing.
    static let auditGuards = ["audit_log_no_update", "audit_log_no_delete", "audit_log_no_replace"]
}
