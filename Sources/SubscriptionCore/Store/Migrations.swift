import Foundation

/// The schema of both engines, as one ordered list of numbered migrations (`Migration`),
/// which `Migrations.migrate` applies to a store of either engine. Every table is created
/// here and nowhere else; a change (a table, a column, an index) is one new entry at the
/// end, with the next number. A migration is never edited once shipped: add one.
///
/// No PostgreSQL store is older than 15: until then PostgreSQL stores were made at once
/// in the state of SQLite's migration 15 (its `schema_version` said 15), which migrations
/// 1 to 15 here make on PostgreSQL, table for table and column for column.
enum Migrations {
    static let all: [Migration] = [
        Migration(1, "subscriptions, their records, notifications, the quarantine, the counts and the intake log", { d in """
        CREATE TABLE subscribers (
            id \(d.generatedID),
            user_id \(d.text) UNIQUE,
            app_account_token \(d.text) UNIQUE,
            created_ms \(d.integer) NOT NULL
        );
        CREATE TABLE subscriptions (
            original_transaction_id \(d.text) PRIMARY KEY,
            subscriber_id \(d.integer) NOT NULL REFERENCES subscribers(id),
            product_id \(d.text) NOT NULL,
            status \(d.integer) NOT NULL,
            entitled \(d.integer) NOT NULL,
            expires_ms \(d.integer),
            purchase_ms \(d.integer),
            original_purchase_ms \(d.integer),
            latest_transaction_id \(d.text),
            auto_renew \(d.integer) NOT NULL,
            auto_renew_product_id \(d.text),
            pending_change_kind \(d.text),
            pending_change_product_id \(d.text),
            grace_expires_ms \(d.integer),
            billing_retry \(d.integer) NOT NULL,
            expiration_intent \(d.integer),
            price_increase_status \(d.integer),
            offer_type \(d.integer),
            offer_identifier \(d.text),
            offer_discount_type \(d.text),
            is_trial \(d.integer) NOT NULL,
            ownership \(d.text) NOT NULL,
            environment \(d.text) NOT NULL,
            app_account_token \(d.text),
            upgraded_from \(d.text),
            revoked_transactions \(d.text),
            last_event_ms \(d.integer),
            last_notification_type \(d.text),
            updated_ms \(d.integer) NOT NULL,
            -- This subscription's share of metric_buckets (MetricContributions, encoded).
            metrics \(d.bytes)
        );
        CREATE INDEX subscriptions_subscriber ON subscriptions(subscriber_id);
        CREATE INDEX subscriptions_product ON subscriptions(product_id, original_transaction_id);
        CREATE INDEX subscriptions_status_expires ON subscriptions(status, expires_ms, original_transaction_id);
        CREATE INDEX subscriptions_expires ON subscriptions(\(d.ifNull)(expires_ms, 0), original_transaction_id);
        CREATE INDEX subscriptions_last_event ON subscriptions(\(d.ifNull)(last_event_ms, 0), original_transaction_id);
        CREATE INDEX subscriptions_status_page ON subscriptions(status, \(d.ifNull)(expires_ms, 0), original_transaction_id);
        CREATE INDEX subscriptions_token ON subscriptions(app_account_token);

        CREATE TABLE transactions (
            transaction_id \(d.text) PRIMARY KEY,
            original_transaction_id \(d.text) NOT NULL,
            product_id \(d.text) NOT NULL,
            subscription_group \(d.text),
            purchase_ms \(d.integer) NOT NULL,
            original_purchase_ms \(d.integer),
            expires_ms \(d.integer),
            revocation_ms \(d.integer),
            revocation_reason \(d.integer),
            is_upgraded \(d.integer) NOT NULL,
            offer_type \(d.integer),
            offer_identifier \(d.text),
            offer_discount_type \(d.text),
            ownership \(d.text) NOT NULL,
            transaction_reason \(d.text),
            price \(d.integer),
            currency \(d.text),
            environment \(d.text) NOT NULL,
            app_account_token \(d.text),
            signed_ms \(d.integer) NOT NULL,
            web_order_line_item_id \(d.text),
            bundle_id \(d.text),
            type \(d.text),
            storefront \(d.text)
        );
        CREATE INDEX transactions_original ON transactions(original_transaction_id);
        CREATE INDEX transactions_purchase ON transactions(purchase_ms);

        CREATE TABLE renewal_info (
            original_transaction_id \(d.text) PRIMARY KEY,
            product_id \(d.text),
            auto_renew_product_id \(d.text),
            auto_renew \(d.integer) NOT NULL,
            expiration_intent \(d.integer),
            billing_retry \(d.integer) NOT NULL,
            grace_expires_ms \(d.integer),
            price_increase_status \(d.integer),
            offer_type \(d.integer),
            offer_identifier \(d.text),
            renewal_ms \(d.integer),
            renewal_price \(d.integer),
            currency \(d.text),
            environment \(d.text) NOT NULL,
            signed_ms \(d.integer) NOT NULL
        );

        CREATE TABLE notifications (
            id \(d.generatedID),
            notification_uuid \(d.text) NOT NULL UNIQUE,
            version \(d.integer) NOT NULL,
            type \(d.text) NOT NULL,
            subtype \(d.text),
            signed_ms \(d.integer) NOT NULL,
            received_ms \(d.integer) NOT NULL,
            original_transaction_id \(d.text),
            transaction_id \(d.text),
            product_id \(d.text),
            environment \(d.text),
            ownership \(d.text),
            body_sha256 \(d.text) NOT NULL,
            -- 0: the body as received; 1: CompactBody format 1 (headers in jws_headers).
            body_format \(d.integer) NOT NULL DEFAULT 0,
            body \(d.bytes) NOT NULL,
            source \(d.text)
        );
        CREATE INDEX notifications_original ON notifications(original_transaction_id, signed_ms);
        CREATE INDEX notifications_received ON notifications(received_ms);
        CREATE INDEX notifications_signed ON notifications(signed_ms);
        CREATE INDEX notifications_digest ON notifications(body_sha256);

        CREATE TABLE quarantine (
            id \(d.generatedID),
            received_ms \(d.integer) NOT NULL,
            reason \(d.text) NOT NULL,
            body \(d.bytes) NOT NULL,
            body_sha256 \(d.text) NOT NULL,
            source \(d.text)
        );
        CREATE INDEX quarantine_received ON quarantine(received_ms);

        -- Daily counts' aggregates per hour bucket: notification counts (n:TYPE/SUBTYPE)
        -- and period starts, ends and level changes (p:...), per segment.
        CREATE TABLE metric_buckets (
            bucket \(d.integer) NOT NULL,
            key \(d.text) NOT NULL,
            segment \(d.text) NOT NULL,
            delta \(d.integer) NOT NULL,
            PRIMARY KEY (bucket, key, segment)
        )\(d.withoutRowID);
        -- How many subscriptions have each status, kept with every save, so the
        -- dashboard's status tabs need not count a million rows at launch.
        CREATE TABLE status_counts (
            status \(d.integer) PRIMARY KEY,
            count \(d.integer) NOT NULL
        );

        -- Levels at a range's start sum one key's history; this covers that read.
        CREATE INDEX metric_buckets_key ON metric_buckets(key, segment, bucket, delta);

        -- Every body's outcome, in arrival order, for the live feed.
        CREATE TABLE intake_log (
            id \(d.generatedID),
            received_ms \(d.integer) NOT NULL,
            result \(d.text) NOT NULL,
            notification_uuid \(d.text),
            type \(d.text),
            subtype \(d.text),
            original_transaction_id \(d.text),
            product_id \(d.text),
            environment \(d.text),
            detail \(d.text)
        );
        CREATE INDEX intake_log_received ON intake_log(received_ms);
        """ }, sqlite: """
        -- JWS headers (alg and certificate chain), stored once however many bodies carry them.
        CREATE TABLE jws_headers (
            id INTEGER PRIMARY KEY,
            segment TEXT NOT NULL UNIQUE
        );
        """, postgres: """
        -- JWS headers (alg and certificate chain), stored once however many bodies carry them.
        -- A segment (a whole certificate chain, some 5 KB) is longer than a B-tree index entry
        -- may be (2704 bytes), so SQLite's UNIQUE is an exclusion constraint on a hash index
        -- here: the same rule (no two rows with equal segments, compared exactly), and
        -- `WHERE segment = ?` still finds a row through the index.
        CREATE TABLE jws_headers (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            segment TEXT COLLATE "C" NOT NULL,
            CONSTRAINT jws_headers_segment_key EXCLUDE USING hash (segment WITH =)
        );
        -- The schema's version (SQLite keeps it in PRAGMA user_version) and a counter every
        -- write commit bumps (SQLite's PRAGMA data_version).
        CREATE TABLE schema_version (version BIGINT NOT NULL);
        INSERT INTO schema_version (version) VALUES (0);
        CREATE TABLE store_changes (
            id SMALLINT PRIMARY KEY CHECK (id = 1),
            version BIGINT NOT NULL
        );
        INSERT INTO store_changes (id, version) VALUES (1, 0);
        """),
        Migration(2, "the audit log, overrides and receipts", { d in """
        -- Operator actions, append-only: the database itself refuses changes.
        CREATE TABLE audit_log (
            id \(d.generatedID),
            at_ms \(d.integer) NOT NULL,
            operator \(d.text) NOT NULL,
            action \(d.text) NOT NULL,
            target \(d.text),
            reason \(d.text),
            outcome \(d.text) NOT NULL,
            detail \(d.text)
        );
        CREATE INDEX audit_log_target ON audit_log(target, at_ms);
        CREATE INDEX audit_log_at ON audit_log(at_ms);

        CREATE TABLE overrides (
            id \(d.generatedID),
            original_transaction_id \(d.text) NOT NULL,
            kind \(d.text) NOT NULL CHECK (kind IN ('grant', 'revoke')),
            until_ms \(d.integer),
            reason \(d.text) NOT NULL,
            operator \(d.text) NOT NULL,
            created_ms \(d.integer) NOT NULL,
            lifted_ms \(d.integer),
            lifted_by \(d.text),
            lift_reason \(d.text)
        );
        CREATE INDEX overrides_target ON overrides(original_transaction_id, created_ms);

        -- The latest receipt per subscription, for verifyReceipt revalidation.
        CREATE TABLE receipts (
            original_transaction_id \(d.text) PRIMARY KEY,
            latest_receipt \(d.text) NOT NULL,
            updated_ms \(d.integer) NOT NULL
        );
        """ }, sqlite: """
        CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
            BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
        CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
            BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
        """, postgres: """
        CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$\(AuditGuards.postgresFunctionBodies["audit_log_append_only"]!)$$;
        -- Row-level, as SQLite's: an UPDATE or DELETE that matches no row is not an error.
        CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
            FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
        CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
            FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
        -- TRUNCATE fires no row trigger; SQLite has no TRUNCATE (and a DELETE without WHERE
        -- fires its delete trigger).
        CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
            FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
        -- Who did it is the database user the entry was written as, not a name the
        -- client chose: the server fills it in on every insert.
        CREATE FUNCTION audit_log_operator() RETURNS trigger LANGUAGE plpgsql AS $$\(AuditGuards.postgresFunctionBodies["audit_log_operator"]!)$$;
        CREATE TRIGGER audit_log_operator BEFORE INSERT ON audit_log
            FOR EACH ROW EXECUTE FUNCTION audit_log_operator();
        """),
        Migration(3, "resolving quarantined bodies") { d in """
        -- A quarantined body is never deleted; a successful replay marks it resolved.
        ALTER TABLE quarantine ADD COLUMN resolved_ms \(d.integer);
        ALTER TABLE quarantine ADD COLUMN resolution \(d.text);
        """ },
        Migration(4, "remembered chain checks") { d in """
        -- Signing chains that passed a full check, so a later process (a CGI request)
        -- need not check them again: keyed by the chain's SHA-256 and the roots'.
        CREATE TABLE verified_chains (
            chain_hash \(d.bytes) NOT NULL,
            roots_hash \(d.bytes) NOT NULL,
            entry_lengths \(d.text) NOT NULL,
            subjects \(d.text) NOT NULL,
            valid_from_s \(d.integer) NOT NULL,
            valid_until_s \(d.integer) NOT NULL,
            checked_ms \(d.integer) NOT NULL,
            PRIMARY KEY (chain_hash, roots_hash)
        );
        """ },
        Migration(5, "one status index fewer") { d in """
        -- subscriptions_status_page (status, IFNULL(expires_ms, 0), id) serves every query
        -- this one did; one index fewer to keep up on every subscription write.
        DROP INDEX IF EXISTS subscriptions_status_expires;
        """ },
        Migration(6, "repeated refusals counted; no REPLACE in the audit log", { d in """
        -- A rejected body seen again is counted, not stored again; one over the size limit or
        -- past the quarantine's budget keeps a prefix (or nothing) with its true length.
        ALTER TABLE quarantine ADD COLUMN body_bytes \(d.integer);
        ALTER TABLE quarantine ADD COLUMN times_seen \(d.integer) NOT NULL DEFAULT 1;
        ALTER TABLE quarantine ADD COLUMN last_seen_ms \(d.integer);
        UPDATE quarantine SET body_bytes = length(body), last_seen_ms = received_ms;
        CREATE INDEX quarantine_digest ON quarantine(body_sha256, resolved_ms);
        """ }, sqlite: """
        -- INSERT OR REPLACE (and REPLACE) would delete an audit row without firing the
        -- delete trigger; an insert naming an id that exists is refused before that happens.
        CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log
            WHEN NEW.id IS NOT NULL AND EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id)
            BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
        """, postgres: """
        -- PostgreSQL has no REPLACE: an insert naming an id that exists fails on the primary
        -- key (or, with ON CONFLICT DO UPDATE, fires audit_log_no_update), and nothing deletes a
        -- row without firing audit_log_no_delete (TRUNCATE aside, refused by audit_log_no_truncate).
        """),
        Migration(7, "where each stored version came from") { d in """
        -- The signedDate of the notification that carried each stored version: the second
        -- key of the order on versions (RecordVersionOrder), after the record's own.
        ALTER TABLE transactions ADD COLUMN notification_signed_ms \(d.integer);
        ALTER TABLE renewal_info ADD COLUMN notification_signed_ms \(d.integer);
        -- Where Apple's whole signed payload of a stored version can be read: the notification
        -- that carried it, or (for a version from an API response) its JSON bytes.
        ALTER TABLE transactions ADD COLUMN source_uuid \(d.text);
        ALTER TABLE transactions ADD COLUMN payload \(d.bytes);
        ALTER TABLE renewal_info ADD COLUMN source_uuid \(d.text);
        ALTER TABLE renewal_info ADD COLUMN payload \(d.bytes);
        -- RESCIND_CONSENT names the app transaction; this finds the subscription it concerns.
        ALTER TABLE transactions ADD COLUMN app_transaction_id \(d.text);
        CREATE INDEX transactions_app_transaction ON transactions(app_transaction_id) WHERE app_transaction_id IS NOT NULL;
        """ },
        Migration(8, "facts about the store") { d in """
        -- Facts about the store itself: `kind = demo` marks a store `subdesk demo` built, the
        -- only kind it may replace.
        CREATE TABLE store_facts (
            key \(d.text) PRIMARY KEY,
            value \(d.text) NOT NULL
        );
        """ },
        // PostgreSQL has no search index: search tests each row's search text (`searchText`,
        // dialect .postgres) as it reads the rows.
        Migration(9, "the search index", sqlite: """
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
        Migration(10, "backfills and delivery gaps") { d in """
        -- Where each intake outcome came from, so the feed can mark backfilled notifications.
        ALTER TABLE intake_log ADD COLUMN source \(d.text);
        -- A backfill from Get Notification History: its window, how far it got (the token of
        -- the next page, kept with each page's notifications so a run resumes exactly), and
        -- what it found.
        CREATE TABLE backfill_runs (
            id \(d.generatedID),
            environment \(d.text) NOT NULL,
            since_ms \(d.integer) NOT NULL,
            until_ms \(d.integer) NOT NULL,
            only_failures \(d.integer) NOT NULL,
            operator \(d.text) NOT NULL,
            started_ms \(d.integer) NOT NULL,
            finished_ms \(d.integer),
            next_page \(d.text),
            pages \(d.integer) NOT NULL DEFAULT 0,
            new \(d.integer) NOT NULL DEFAULT 0,
            duplicates \(d.integer) NOT NULL DEFAULT 0,
            rejected \(d.integer) NOT NULL DEFAULT 0
        );
        -- Notifications Apple says it sent that first reached this store through a backfill,
        -- with Apple's delivery attempts as it reported them (JSON).
        CREATE TABLE delivery_gaps (
            notification_uuid \(d.text) PRIMARY KEY,
            backfill_run \(d.integer) NOT NULL REFERENCES backfill_runs(id),
            send_attempts \(d.text) NOT NULL,
            found_ms \(d.integer) NOT NULL
        );
        """ },
        Migration(11, "renewal-date extensions") { d in """
        -- Renewal-date extensions asked of Apple: one subscription's, or every active
        -- subscriber's of a product (original_transaction_id NULL), with what Apple answered.
        CREATE TABLE renewal_extensions (
            id \(d.generatedID),
            request_identifier \(d.text) NOT NULL UNIQUE,
            original_transaction_id \(d.text),
            product_id \(d.text),
            storefronts \(d.text),
            days \(d.integer) NOT NULL,
            reason_code \(d.integer) NOT NULL,
            reason \(d.text) NOT NULL,
            operator \(d.text) NOT NULL,
            requested_ms \(d.integer) NOT NULL,
            outcome \(d.text) NOT NULL,
            effective_ms \(d.integer),
            succeeded \(d.integer),
            failed \(d.integer),
            completed_ms \(d.integer)
        );
        CREATE INDEX renewal_extensions_target ON renewal_extensions(original_transaction_id, requested_ms);
        """ },
        Migration(12, "refund requests", { d in """
        -- Refund requests: every CONSUMPTION_REQUEST opens one (Apple wants the consumption
        -- information within 12 hours of asking); the first REFUND or REFUND_DECLINED of the
        -- same transaction signed at or after it closes it, whichever arrives first.
        CREATE TABLE refund_requests (
            notification_uuid \(d.text) PRIMARY KEY,
            original_transaction_id \(d.text),
            transaction_id \(d.text),
            environment \(d.text),
            requested_ms \(d.integer) NOT NULL,
            -- The last answer sent, as JSON, who sent it, when, and what Apple said to it
            -- ('accepted' or 'refused: ...').
            answer \(d.text),
            answered_by \(d.text),
            answered_ms \(d.integer),
            answer_outcome \(d.text),
            -- When subdesk noticed (and audited) that the deadline passed unanswered.
            missed_ms \(d.integer),
            closed_ms \(d.integer),
            closed_by \(d.text),
            closing_uuid \(d.text)
        );
        CREATE INDEX refund_requests_queue ON refund_requests(closed_ms, requested_ms);
        CREATE INDEX refund_requests_transaction ON refund_requests(transaction_id);
        """ }, sqlite: """
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
        """, postgres: """
        -- The trigger functions name tables without a schema; SET search_path FROM CURRENT
        -- keeps them on this store's tables (as a SQLite trigger's are) whatever the
        -- inserting session's search_path is. Of refunds signed at the same millisecond the
        -- first stored closes: the order SQLite's notifications_original index (ties in
        -- rowid order) gives them, where its ORDER BY alone leaves the choice open. (No
        -- PostgreSQL store is older than migration 15: no requests to open for rows stored before.)
        CREATE FUNCTION refund_request_open() RETURNS trigger LANGUAGE plpgsql
        SET search_path FROM CURRENT AS $$
        BEGIN
            INSERT INTO refund_requests (notification_uuid, original_transaction_id, transaction_id, environment, requested_ms)
            VALUES (NEW.notification_uuid, NEW.original_transaction_id, NEW.transaction_id, NEW.environment, NEW.signed_ms)
            ON CONFLICT DO NOTHING;
            UPDATE refund_requests r SET (closed_ms, closed_by, closing_uuid) = (
                SELECT n.signed_ms, n.type, n.notification_uuid FROM notifications n
                WHERE n.original_transaction_id = NEW.original_transaction_id AND n.signed_ms >= NEW.signed_ms
                  AND n.transaction_id = NEW.transaction_id AND n.type IN ('REFUND', 'REFUND_DECLINED')
                ORDER BY n.signed_ms, n.id LIMIT 1)
            WHERE r.notification_uuid = NEW.notification_uuid AND EXISTS (
                SELECT 1 FROM notifications n
                WHERE n.original_transaction_id = NEW.original_transaction_id AND n.signed_ms >= NEW.signed_ms
                  AND n.transaction_id = NEW.transaction_id AND n.type IN ('REFUND', 'REFUND_DECLINED'));
            RETURN NULL;
        END
        $$;
        CREATE FUNCTION refund_request_close() RETURNS trigger LANGUAGE plpgsql
        SET search_path FROM CURRENT AS $$
        BEGIN
            UPDATE refund_requests r SET closed_ms = NEW.signed_ms, closed_by = NEW.type, closing_uuid = NEW.notification_uuid
            WHERE r.transaction_id = NEW.transaction_id AND r.closed_ms IS NULL AND r.requested_ms <= NEW.signed_ms;
            RETURN NULL;
        END
        $$;
        CREATE TRIGGER refund_request_open AFTER INSERT ON notifications
            FOR EACH ROW WHEN (NEW.type = 'CONSUMPTION_REQUEST') EXECUTE FUNCTION refund_request_open();
        CREATE TRIGGER refund_request_close AFTER INSERT ON notifications
            FOR EACH ROW WHEN (NEW.type IN ('REFUND', 'REFUND_DECLINED')) EXECUTE FUNCTION refund_request_close();
        """),
        Migration(13, "shares to recompute") { d in """
        -- Subscriptions whose share of the counts predates the metrics derived from
        -- transactions (new paid, churn, refunds...): Store.catchUpMetrics recomputes them.
        CREATE TABLE metrics_pending (original_transaction_id \(d.text) PRIMARY KEY)\(d.withoutRowID);
        INSERT INTO metrics_pending SELECT original_transaction_id FROM subscriptions;
        """ },
        Migration(14, "every share recomputed for the transaction metrics") { d in """
        -- Every metric now comes from each subscription's share (churn by reason, auto-renew
        -- off and on, revocations, product changes, billing trouble), with each entry's
        -- product, storefront and offer: recompute them all.
        \(d.insertOrIgnore) metrics_pending SELECT original_transaction_id FROM subscriptions\(d.onConflictIgnore);
        """ },
        Migration(15, "counts by segment") { d in """
        -- The counts by product, subscription group, storefront and offer type: every
        -- aggregate once per dimension, with its value. Kept up by Store.catchUpSegments
        -- from the subscriptions noted pending (with the share the aggregates last took),
        -- when a report by segment asks.
        CREATE TABLE metric_segments (
            dimension \(d.text) NOT NULL,
            value \(d.text) NOT NULL,
            key \(d.text) NOT NULL,
            segment \(d.text) NOT NULL,
            bucket \(d.integer) NOT NULL,
            delta \(d.integer) NOT NULL,
            PRIMARY KEY (dimension, value, key, segment, bucket)
        )\(d.withoutRowID);
        CREATE TABLE metric_segments_pending (original_transaction_id \(d.text) PRIMARY KEY, applied \(d.bytes))\(d.withoutRowID);
        INSERT INTO metric_segments_pending SELECT original_transaction_id, NULL FROM subscriptions;
        """ },
        Migration(16, "sealed chain checks") { d in """
        -- Remembered chain checks are believed only through a seal (an HMAC under a key kept
        -- outside the store, ChainMemoryKey): rows from before carry none, so they go.
        DELETE FROM verified_chains;
        ALTER TABLE verified_chains ADD COLUMN seal \(d.bytes);
        """ },
        Migration(17, "consent withdrawals found by index") { d in """
        -- Consent withdrawals (RESCIND_CONSENT) are read from the notifications themselves, on
        -- every subscriber list and feed refresh: this keeps that from reading every row.
        CREATE INDEX IF NOT EXISTS notifications_rescind ON notifications(signed_ms) WHERE type = 'RESCIND_CONSENT';
        """ },
        Migration(18, "intake counted for the on-call metrics") { d in """
        -- Every intake outcome counted by environment, type, outcome and kind of refusal, with
        -- the latest arrival: the on-call metrics read these few rows on every scrape instead
        -- of the whole intake log, and they only ever grow, as Prometheus counters must.
        CREATE TABLE intake_counts (
            environment \(d.text) NOT NULL,
            type \(d.text) NOT NULL,
            outcome \(d.text) NOT NULL,
            reason \(d.text) NOT NULL,
            count \(d.integer) NOT NULL,
            last_ms \(d.integer) NOT NULL,
            PRIMARY KEY (environment, type, outcome, reason)
        )\(d.withoutRowID);
        \(Migrations.intakeCountsBackfill(dialect: d))
        -- The last sweep, the last day's failed revalidations: found without reading the log.
        CREATE INDEX audit_log_action ON audit_log(action, at_ms);
        """ },
        Migration(19, "every share recomputed for the cohorts") { d in """
        -- Each subscription's share now holds its place in the cohort reports (retention,
        -- realized lifetime value, trial conversion), kept in metric_buckets under `c:` keys:
        -- recompute every share.
        \(d.insertOrIgnore) metrics_pending SELECT original_transaction_id FROM subscriptions\(d.onConflictIgnore);
        """ },
        Migration(20, "every share recomputed for five corrected rules") { d in """
        -- Shares follow five corrected rules (a billing recovery within grace continues the
        -- run, a comeback counts in every period it overlaps, a prorated refund's money is in
        -- the period it happened, a trial renewed after billing retry started with the trial,
        -- family-shared access moves no money): recompute every share.
        \(d.insertOrIgnore) metrics_pending SELECT original_transaction_id FROM subscriptions\(d.onConflictIgnore);
        """ },
        Migration(21, "a function to drop an empty subscriber", postgres: """
        -- Support drops the subscriber a link left owning nothing through this function, run
        -- as the owner, instead of holding DELETE on subscribers (which would let it LOCK the
        -- table in any mode and stall intake). Its search path is the store's schema, then
        -- pg_temp, so a caller's temporary table cannot stand in for a store table. SQLite has
        -- no roles, and drops it with a plain DELETE: nothing changes there.
        DO $$ BEGIN
            EXECUTE format($f$
                CREATE OR REPLACE FUNCTION subdesk_drop_empty_subscriber(subscriber BIGINT) RETURNS void
                LANGUAGE sql SECURITY DEFINER SET search_path = %I, pg_temp AS $b$
                    DELETE FROM subscribers WHERE id = subscriber AND user_id IS NULL
                    AND NOT EXISTS (SELECT 1 FROM subscriptions WHERE subscriber_id = subscriber)
                $b$ $f$, current_schema());
        END $$;
        REVOKE ALL ON FUNCTION subdesk_drop_empty_subscriber(BIGINT) FROM PUBLIC;
        """),
        Migration(22, "each refusal's kind") { d in """
        -- Each refusal's kind (RejectionClass), stated where intake refuses a body and stored
        -- beside its text, which is never read back for it. Rows from before get the kind
        -- their reason's words gave.
        \(Migrations.refusalKinds(dialect: d))
        """ },
        Migration(AuditStamp.version, "audit entries dated by the server, each role's actions checked", postgres: AuditStamp.postgres),
        Migration(24, "shares recomputed where an upgrade's purchase was refunded in part") { d in """
        -- An upgrade's purchase refunded in part (REFUND_PRORATED) now replaces the period
        -- before it at once: recompute the share of every subscription with a revoked
        -- transaction (the refund's type is kept only in the signed payload, so this is a
        -- superset of the subscriptions whose share changes).
        \(d.insertOrIgnore) metrics_pending SELECT DISTINCT original_transaction_id FROM transactions
            WHERE revocation_ms IS NOT NULL\(d.onConflictIgnore);
        """ },
        Migration(25, "every record's app", { d in """
        -- Each record's app as Apple signed it: its bundle id (an app's name is the
        -- configuration's, mapped when read, so renaming an app orphans nothing). NULL where
        -- the app cannot be known; it then reads as the single configured app, if one.
        ALTER TABLE subscriptions ADD COLUMN bundle_id \(d.text);
        ALTER TABLE notifications ADD COLUMN bundle_id \(d.text);
        ALTER TABLE quarantine ADD COLUMN bundle_id \(d.text);
        ALTER TABLE refund_requests ADD COLUMN bundle_id \(d.text);
        ALTER TABLE backfill_runs ADD COLUMN bundle_id \(d.text);
        -- Stored rows take it from the transactions they carry (each stores the bundle id
        -- Apple signed in it): a subscription from its newest transaction that names one, a
        -- notification from its own transaction, else from any of its subscription's.
        UPDATE subscriptions SET bundle_id = (
            SELECT t.bundle_id FROM transactions t
            WHERE t.original_transaction_id = subscriptions.original_transaction_id AND t.bundle_id IS NOT NULL
            ORDER BY t.purchase_ms DESC, t.transaction_id DESC LIMIT 1);
        UPDATE notifications SET bundle_id = coalesce(
            (SELECT t.bundle_id FROM transactions t WHERE t.transaction_id = notifications.transaction_id),
            (SELECT s.bundle_id FROM subscriptions s WHERE s.original_transaction_id = notifications.original_transaction_id));
        UPDATE refund_requests SET bundle_id = (
            SELECT n.bundle_id FROM notifications n WHERE n.notification_uuid = refund_requests.notification_uuid);
        -- Scoped reads: one app's subscriptions by status page, expiry and last event, and
        -- its notifications by arrival.
        CREATE INDEX subscriptions_app_status_page ON subscriptions(bundle_id, status, \(d.ifNull)(expires_ms, 0), original_transaction_id);
        CREATE INDEX subscriptions_app_expires ON subscriptions(bundle_id, \(d.ifNull)(expires_ms, 0), original_transaction_id);
        CREATE INDEX subscriptions_app_last_event ON subscriptions(bundle_id, \(d.ifNull)(last_event_ms, 0), original_transaction_id);
        CREATE INDEX notifications_app_received ON notifications(bundle_id, received_ms);
        -- Each share now names its app (the by-segment counts' `app` dimension): recompute them all.
        \(d.insertOrIgnore) metrics_pending SELECT original_transaction_id FROM subscriptions\(d.onConflictIgnore);
        """ }, sqlite: """
        -- A consumption request opens its refund request under its notification's app.
        DROP TRIGGER IF EXISTS refund_request_open;
        CREATE TRIGGER refund_request_open AFTER INSERT ON notifications WHEN NEW.type = 'CONSUMPTION_REQUEST' BEGIN
            INSERT OR IGNORE INTO refund_requests (notification_uuid, original_transaction_id, transaction_id, environment, requested_ms, bundle_id)
            VALUES (NEW.notification_uuid, NEW.original_transaction_id, NEW.transaction_id, NEW.environment, NEW.signed_ms, NEW.bundle_id);
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
        """, postgres: """
        -- A consumption request opens its refund request under its notification's app.
        CREATE OR REPLACE FUNCTION refund_request_open() RETURNS trigger LANGUAGE plpgsql
        SET search_path FROM CURRENT AS $$
        BEGIN
            INSERT INTO refund_requests (notification_uuid, original_transaction_id, transaction_id, environment, requested_ms, bundle_id)
            VALUES (NEW.notification_uuid, NEW.original_transaction_id, NEW.transaction_id, NEW.environment, NEW.signed_ms, NEW.bundle_id)
            ON CONFLICT DO NOTHING;
            UPDATE refund_requests r SET (closed_ms, closed_by, closing_uuid) = (
                SELECT n.signed_ms, n.type, n.notification_uuid FROM notifications n
                WHERE n.original_transaction_id = NEW.original_transaction_id AND n.signed_ms >= NEW.signed_ms
                  AND n.transaction_id = NEW.transaction_id AND n.type IN ('REFUND', 'REFUND_DECLINED')
                ORDER BY n.signed_ms, n.id LIMIT 1)
            WHERE r.notification_uuid = NEW.notification_uuid AND EXISTS (
                SELECT 1 FROM notifications n
                WHERE n.original_transaction_id = NEW.original_transaction_id AND n.signed_ms >= NEW.signed_ms
                  AND n.transaction_id = NEW.transaction_id AND n.type IN ('REFUND', 'REFUND_DECLINED'));
            RETURN NULL;
        END
        $$;
        """),
        Migration(26, "the by-segment catch-up's phases") { d in Migrations.segmentCatchUp(dialect: d) },
        Migration(27, "intake counted per app", { d in """
        -- Each intake outcome is counted under its app as well: the bundle id the body was
        -- signed for, '' when it could not be read, '*' for a refused body naming a bundle
        -- id no configured app had (the on-call metrics' `app` label). No
        -- engine changes a primary key in place, so the table is made again under its own
        -- name (every reader, the roles' rights and a copy between stores name it as
        -- before) and the old table dropped: its rows are carried over whole, under the
        -- unknown app, and nothing else reads it.
        CREATE TABLE intake_counts_26 AS SELECT environment, type, outcome, reason, count, last_ms FROM intake_counts;
        DROP TABLE intake_counts;
        \(Migrations.intakeCountsTable(dialect: d, byApp: true))
        INSERT INTO intake_counts (bundle_id, environment, type, outcome, reason, count, last_ms)
            SELECT '', environment, type, outcome, reason, count, last_ms FROM intake_counts_26;
        DROP TABLE intake_counts_26;
        """ }, postgres: """
        -- The new table has no grants: each role gets its rights on it here (where this
        -- store's roles were installed), so an intake login keeps counting after `migrate`;
        -- and on the by-segment catch-up's table, which migration 26 made without them (a
        -- read login could not count by segment, nor intake catch up, until the roles were
        -- installed again).
        \(PostgresRoles.grants(onNew: ["intake_counts", "metric_segments_catchup"]))
        """),
        Migration(28, "the by-segment aggregates read from one index on PostgreSQL", postgres: """
        -- A report of one app (or one product, one offer) reads its hour buckets from
        -- metric_segments by its key. SQLite keeps that table in key order (WITHOUT ROWID);
        -- PostgreSQL's key index left each row's delta on the heap, a page read per few rows,
        -- and one app's year of counts took 1.1-1.3 times as long as every app's at 1M
        -- (subdesk-bench --only apps). This index holds the delta too, so such a read is the
        -- index's alone.
        CREATE INDEX metric_segments_read ON metric_segments (dimension, value, key, segment, bucket) INCLUDE (delta);
        """),
        Migration(29, "one app's aggregates in an index of their own on PostgreSQL", postgres: """
        -- A report of one app reads its rows of metric_segments_read, whose entries also hold
        -- the dimension, and whose key compares one column more: a key's year took 1.3 ms
        -- there against 1.1 ms from metric_buckets_key at 1M (warm), and one app's counts
        -- 1.08 times every app's (subdesk-bench --only apps). The app's rows alone, without
        -- the dimension, read as fast as the store's. The statements name the dimension as a
        -- literal (Store.forEachMetricBucket, Store.metricTotals), so that a prepared
        -- statement's generic plan can use this index.
        CREATE INDEX metric_segments_app ON metric_segments (value, key, segment, bucket) INCLUDE (delta) WHERE dimension = 'app';
        """),
        Migration(30, "each notification's grace period end", { d in """
        -- The end of the billing grace period that each notification's renewal info signed
        -- (gracePeriodExpiresDate): a gap's grace, kept whatever renewal info arrives after
        -- (the store keeps only the latest). Filled for the stored bodies by
        -- Migrations.fillGraceExpiries, and every share recomputed with it.
        ALTER TABLE notifications ADD COLUMN grace_expires_ms \(d.integer);
        \(d.insertOrIgnore) metrics_pending SELECT original_transaction_id FROM subscriptions\(d.onConflictIgnore);
        """ }, fill: MigrationFill(run: Migrations.fillGraceExpiries)),
        Migration(LockHolderEnding.version, "a session that holds the writers' lock past its login's bound is ended",
                  postgres: LockHolderEnding.postgres),
        Migration(32, "retention offers counted in a segment of their own") { d in """
        -- A retention offer (offerType 5, redeemed on the App Store's cancellation sheet) is
        -- offer=retention in the counts by segment, where it was type_5 (OfferType): recompute
        -- the share of every subscription with one.
        \(d.insertOrIgnore) metrics_pending SELECT DISTINCT original_transaction_id FROM transactions
            WHERE offer_type = 5\(d.onConflictIgnore);
        """ },
        Migration(33, "the outbox of deliveries owed to forward targets, and each attempt's answer", { d in """
        -- One row per notification and [forward] target it is owed to, written in the write
        -- that stores the notification (Store+Forwarding.swift states the states and the order).
        CREATE TABLE forward_outbox (
            id \(d.generatedID),
            target \(d.text) NOT NULL,
            notification_uuid \(d.text) NOT NULL,
            original_transaction_id \(d.text),
            bundle_id \(d.text),
            environment \(d.text),
            type \(d.text) NOT NULL,
            owed_ms \(d.integer) NOT NULL,
            give_up_ms \(d.integer) NOT NULL,
            state \(d.text) NOT NULL,
            attempts \(d.integer) NOT NULL,
            next_ms \(d.integer) NOT NULL,
            claim_until_ms \(d.integer),
            claimed_by \(d.text),
            delivered_ms \(d.integer),
            last_attempt_ms \(d.integer),
            last_status \(d.integer),
            last_error \(d.text),
            UNIQUE (target, notification_uuid)
        );
        CREATE INDEX forward_outbox_pending ON forward_outbox(target, id) WHERE state = 'pending';
        CREATE INDEX forward_outbox_order ON forward_outbox(target, original_transaction_id, id) WHERE state = 'pending';
        CREATE INDEX forward_outbox_subscription ON forward_outbox(original_transaction_id);
        CREATE INDEX forward_outbox_state ON forward_outbox(target, state, last_attempt_ms);
        CREATE TABLE forward_attempts (
            outbox_id \(d.integer) NOT NULL,
            attempt \(d.integer) NOT NULL,
            at_ms \(d.integer) NOT NULL,
            took_ms \(d.integer) NOT NULL,
            status \(d.integer),
            error \(d.text),
            answer \(d.bytes),
            PRIMARY KEY (outbox_id, attempt)
        )\(d.withoutRowID);
        """ }, postgres: """
        -- Tables made after the roles were installed have no grants: each role gets its rights here.
        \(PostgresRoles.grants(onNew: ["forward_outbox", "forward_attempts"]))
        """),
        Migration(34, "cohorts split by how a subscription was saved") { d in """
        -- Each cohort share names how its subscription was first saved from cancelling (the
        -- `saved` dimension): a retention offer, offerType 5. A key written before reads as never
        -- saved (CohortShare.cell), so only the shares of subscriptions with one are recomputed.
        \(d.insertOrIgnore) metrics_pending SELECT DISTINCT original_transaction_id FROM transactions
            WHERE offer_type = 5\(d.onConflictIgnore);
        """ },
        Migration(35, "Apple's retention messaging report, imported", { d in """
        -- The rows of Apple's App Store Retention Messaging analytics report (subdesk
        -- retention report import): each day's count of one event of the cancellation sheet
        -- for one subscription, message type, device, platform version and territory. Keyed
        -- by those and the day joined (row_key), so importing a file again replaces its rows.
        CREATE TABLE retention_messaging (
            row_key \(d.text) PRIMARY KEY,
            day \(d.text) NOT NULL,
            app_name \(d.text) NOT NULL,
            app_apple_id \(d.text) NOT NULL,
            group_name \(d.text) NOT NULL,
            group_id \(d.text) NOT NULL,
            subscription_name \(d.text) NOT NULL,
            subscription_id \(d.text) NOT NULL,
            event \(d.text) NOT NULL,
            message_type \(d.text) NOT NULL,
            device \(d.text) NOT NULL,
            platform_version \(d.text) NOT NULL,
            territory \(d.text) NOT NULL,
            counts \(d.integer) NOT NULL,
            imported_ms \(d.integer) NOT NULL
        );
        CREATE INDEX retention_messaging_day ON retention_messaging (day);
        """ }, postgres: """
        -- The new table's rights for each installed role, and the audit entries' check
        -- made again with the import's action (retention_report_import, an operator's).
        \(PostgresRoles.grants(onNew: ["retention_messaging"]))
        CREATE OR REPLACE FUNCTION \(AuditStamp.stamp)() RETURNS trigger LANGUAGE plpgsql
        SET search_path = \(AuditStamp.searchPath) AS $$\(AuditStamp.stampBody)$$;
        """),
        Migration(36, "an operator's replays and retries of the relay are audited", postgres: """
        -- The audit entries' check made again with the relay's actions (forward_replay,
        -- forward_retry: an operator's).
        CREATE OR REPLACE FUNCTION \(AuditStamp.stamp)() RETURNS trigger LANGUAGE plpgsql
        SET search_path = \(AuditStamp.searchPath) AS $$\(AuditStamp.stampBody)$$;
        """),
        Migration(37, "what the retention console put at Apple: messages, images, defaults, real-time URLs", { d in """
        -- One row per message, image, default message or real-time URL the console put at
        -- Apple's Retention Messaging API, per app and environment (Store+RetentionContent.swift):
        -- what was sent, its checksum, and the review state Apple's list last showed. Keyed by
        -- app, environment, kind and identifier joined (record_key).
        CREATE TABLE retention_content (
            record_key \(d.text) PRIMARY KEY,
            app \(d.text) NOT NULL,
            environment \(d.text) NOT NULL,
            kind \(d.text) NOT NULL,
            identifier \(d.text) NOT NULL,
            content \(d.text) NOT NULL,
            checksum \(d.text),
            state \(d.text),
            uploaded_ms \(d.integer) NOT NULL,
            seen_ms \(d.integer)
        );
        """ }, postgres: """
        -- The new table's rights for each installed role, and the audit entries' check made
        -- again with the console's actions (retention_upload, retention_delete,
        -- retention_default, retention_realtime_url, retention_performance_test: an operator's).
        \(PostgresRoles.grants(onNew: ["retention_content"]))
        CREATE OR REPLACE FUNCTION \(AuditStamp.stamp)() RETURNS trigger LANGUAGE plpgsql
        SET search_path = \(AuditStamp.searchPath) AS $$\(AuditStamp.stampBody)$$;
        """),
        Migration(38, "the real-time retention responder's decisions", { d in """
        -- One row per real-time Retention Messaging request serve answered: the request,
        -- the subscription and app, the rule and answer (kind and value), the outcome
        -- (answered, no_rule, store_unavailable, offer_key_unreadable, refused:WHY) and the
        -- microseconds the answer took.
        CREATE TABLE retention_decisions (
            id \(d.generatedID),
            request_id \(d.text),
            original_transaction_id \(d.text),
            app_name \(d.text),
            rule \(d.text),
            answer_kind \(d.text),
            answer_value \(d.text),
            outcome \(d.text) NOT NULL,
            detail \(d.text),
            decided_ms \(d.integer) NOT NULL,
            micros \(d.integer) NOT NULL
        );
        CREATE INDEX retention_decisions_subscription ON retention_decisions (original_transaction_id, decided_ms);
        """ }, postgres: """
        -- The new table's rights for each installed role: intake (serve) adds decisions.
        \(PostgresRoles.grants(onNew: ["retention_decisions"]))
        """),
        Migration(39, "each notification's auto-renew status, and real-time retention saves counted", { d in """
        -- Whether auto-renew was on, and the product it renews into, in the renewal info each
        -- notification carried (autoRenewStatus, autoRenewProductId): kept whatever renewal
        -- info arrives after (the store keeps only the latest), what a real-time save is read
        -- from (RealtimeSave). Filled for the stored bodies by Migrations.fillAutoRenew, and
        -- the share of each subscription with an answered request recomputed with them.
        ALTER TABLE notifications ADD COLUMN auto_renew \(d.integer);
        ALTER TABLE notifications ADD COLUMN auto_renew_product_id \(d.text);
        \(d.insertOrIgnore) metrics_pending SELECT original_transaction_id FROM subscriptions WHERE original_transaction_id IN
            (SELECT original_transaction_id FROM retention_decisions WHERE outcome = 'answered')\(d.onConflictIgnore);
        """ }, fill: MigrationFill(run: Migrations.fillAutoRenew)),
        Migration(40, "a delivery owed again counts the target's refusals afresh; overdue deliveries found by their give-up time", { d in """
        -- The attempts a delivery had when it was last owed again (forward replay, forward
        -- retry --dead): the refusals that make it dead are counted from there.
        ALTER TABLE forward_outbox ADD COLUMN round_start \(d.integer) NOT NULL DEFAULT 0;
        -- Each claim first marks dead the pending deliveries past their give-up time, inside
        -- the write: by this index a range, not every pending row (41 ms for 100,000 pending
        -- on SQLite, with the writers that answer Apple waiting behind it).
        CREATE INDEX forward_outbox_give_up ON forward_outbox (target, give_up_ms) WHERE state = 'pending';
        """ }),
        Migration(41, "Apple's retention messaging report read with all its columns", { d in """
        -- The columns of Apple's report the import did not read before: Page, Message Selection
        -- Type (Default or Real-time) and Save Type; message_type now holds Retention Message
        -- Type. A row imported from now on has all three (empty text where Apple's field is
        -- empty) and is keyed by every field of Apple's row but Counts. Rows imported before
        -- keep their columns and keys as they were, these three NULL: the report leaves them
        -- out of its figures and counts them apart.
        ALTER TABLE retention_messaging ADD COLUMN page \(d.text);
        ALTER TABLE retention_messaging ADD COLUMN selection_type \(d.text);
        ALTER TABLE retention_messaging ADD COLUMN save_type \(d.text);
        """ }),
        Migration(42, "each product's subscription group found by seeks", { _ in """
        -- serve checks the retention rules' switch-plan answers against each product's group
        -- (its latest transaction's) when it loads them. Read from every transaction that took
        -- 3 to 4 seconds at 3M transactions on SQLite; with this index it is a seek per
        -- product (Store.subscriptionGroups).
        CREATE INDEX transactions_product_group ON transactions (product_id, purchase_ms, subscription_group)
            WHERE subscription_group IS NOT NULL;
        """ }),
        Migration(43, "the outbox's state index leaves out pending deliveries", { _ in """
        -- Intake owes each notification to each target inside the write that stores it, and
        -- each index of the outbox is one more page in that write. The state index kept
        -- pending rows too, which the pending index already finds: without them, a delivery
        -- enters it when it is delivered or dead, in the deliverer's write. With two targets
        -- on a closed port, serve's time per notification was 25% over none with the index
        -- whole, 17% with it partial (subdesk-bench --only relay, BENCHMARKS.md).
        DROP INDEX forward_outbox_state;
        CREATE INDEX forward_outbox_state ON forward_outbox (target, state, last_attempt_ms) WHERE state <> 'pending';
        """ }),
        Migration(44, "a stored notification's deliveries are owed in one row, which the deliverers spread", { d in """
        -- Intake owed a notification to each target as one outbox row per target, each entering
        -- the outbox's unique key and four indexes inside the write that answers Apple: with two
        -- targets serve's time per notification was 17% over none (BENCHMARKS.md). It now owes
        -- them in one row of this table, with no index but its key, naming the targets and
        -- their max_age ("backend=259200000 crm=3600000"); a deliverer spreads it into the
        -- outbox rows and removes it, in its own write (Store+Forwarding.swift).
        CREATE TABLE forward_owed (
            id \(d.generatedID),
            notification_uuid \(d.text) NOT NULL,
            original_transaction_id \(d.text),
            bundle_id \(d.text),
            environment \(d.text),
            type \(d.text) NOT NULL,
            owed_ms \(d.integer) NOT NULL,
            targets \(d.text) NOT NULL
        );
        """ }, postgres: """
        \(PostgresRoles.grants(onNew: ["forward_owed"]))
        """),
        Migration(45, "three indexes no statement reads", { _ in """
        -- Every index is another page in the write that stores a notification. No statement
        -- of subdesk's (nor a trigger) looks these up: a subscription's appAccountToken is
        -- found through its subscriber (subscribers' unique key), transactions by purchase
        -- date only behind a product or an app transaction id (their own indexes), and
        -- notifications by signing date only behind a subscription (notifications_original)
        -- or among consent withdrawals (notifications_rescind); counting every notification
        -- reads notifications_received, as small. Found by the plan of every statement the
        -- test suite prepares; notifications_signed alone was four of the hundred pages a
        -- group of serve's requests wrote (BENCHMARKS.md). One already gone is what this
        -- asks for.
        DROP INDEX IF EXISTS subscriptions_token;
        DROP INDEX IF EXISTS transactions_purchase;
        DROP INDEX IF EXISTS notifications_signed;
        """ }),
    ]

    /// Migration 30's fill: each stored notification whose renewal info signed a grace period
    /// end gets it.
    static func fillGraceExpiries(_ db: any SQLConnection) throws {
        try fillFromCarriedRenewal(db, set: "grace_expires_ms = ?") { $0.gracePeriodExpiresDate.map { [$0] } }
    }

    /// Migration 39's fill: each stored notification that carried renewal info gets its
    /// auto-renew status and the product it renews into.
    static func fillAutoRenew(_ db: any SQLConnection) throws {
        try fillFromCarriedRenewal(db, set: "auto_renew = ?, auto_renew_product_id = ?") { [$0.autoRenewStatus, $0.autoRenewProductId] }
    }

    /// Sets `columns` (`a = ?, b = ?`) of each stored notification whose body carried renewal
    /// info to what `values` reads from that renewal info (nothing where it gives nil), read
    /// back from the body as intake reads it (V2: `signedRenewalInfo`; V1: the subscription's
    /// pending renewal info), a thousand rows at a time.
    /// The columns these fills read, as the tables had them when the fills were written
    /// (a migration reads what its own version of the schema holds, not the table types').
    enum CarriedHeader: Int, SelectedValues, CodingKey { case id, segment }
    enum CarriedBody: Int, SelectedValues, CodingKey { case id, version, bodyFormat, body, originalTransactionId }

    static func fillFromCarriedRenewal(_ db: any SQLConnection, set columns: String,
                                       _ values: (RenewalRecord) -> [SQLBindable?]?) throws {
        var headers: [Int64: String] = [:]
        try db.query("SELECT \(CarriedHeader.list) FROM jws_headers", []) { row in
            let r = CarriedHeader.row(row)
            headers[r.int64(.id)] = r.string(.segment)
        }
        var after: Int64 = 0
        while true {
            var found: [(id: Int64, values: [SQLBindable?])] = []
            var last: Int64?
            try db.query("""
                SELECT \(CarriedBody.list) FROM notifications WHERE id > ? ORDER BY id LIMIT 1000
                """, [after]) { row in
                let r = CarriedBody.row(row)
                last = r.int64(.id)
                let stored = r.data(.body)
                let body: Data
                switch r.int(.bodyFormat) {
                case 0: body = stored
                case 1: guard let decoded = try? CompactBody.decode(stored, header: { headers[$0] ?? "" }) else { return }
                    body = decoded
                default: return
                }
                if let renewal = carriedRenewal(body: body, version: r.int(.version), originalTransactionId: r.optionalString(.originalTransactionId)),
                   let set = values(renewal) {
                    found.append((r.int64(.id), set))
                }
            }
            for row in found {
                try db.run("UPDATE notifications SET \(columns) WHERE id = ?", row.values + [row.id])
            }
            guard let last else { return }
            after = last
        }
    }

    /// The renewal info a stored body carried, if any, read by intake's own decoders
    /// (`RenewalRecord(v2:)`, `NotificationV1`), as intake read it when it came.
    static func carriedRenewal(body: Data, version: Int, originalTransactionId: String?) -> RenewalRecord? {
        if version == 2 {
            guard let json = ApplePayloads.nestedPayload(body: body, field: "signedRenewalInfo"),
                  let fields = try? JSONFields(data: json, path: "signedRenewalInfo") else { return nil }
            return try? RenewalRecord(v2: fields)
        }
        guard let fields = try? JSONFields(data: body, path: "body"), let v1 = try? NotificationV1(json: fields) else { return nil }
        return v1.renewal(of: originalTransactionId)
    }

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

    /// The intake counters' table: keyed by app first (`byApp`, migration 27), or as
    /// migration 18 made it.
    static func intakeCountsTable(dialect d: SQLDialect, byApp: Bool) -> String {
        let app = byApp ? ["bundle_id"] : []
        return "CREATE TABLE intake_counts (\n"
            + (app + ["environment", "type", "outcome", "reason"]).map { "    \($0) \(d.text) NOT NULL,\n" }.joined()
            + "    count \(d.integer) NOT NULL,\n    last_ms \(d.integer) NOT NULL,\n"
            + "    PRIMARY KEY (\((app + ["environment", "type", "outcome", "reason"]).joined(separator: ", ")))\n)\(d.withoutRowID);"
    }

    /// Migration 22 on either engine: the kind column of the quarantine and the intake log,
    /// filled for the rows stored before it.
    static func refusalKinds(dialect: SQLDialect) -> String {
        """
        ALTER TABLE quarantine ADD COLUMN reason_kind \(dialect.text) NOT NULL DEFAULT 'other';
        UPDATE quarantine SET reason_kind = \(rejectionClass("reason", dialect: dialect));
        ALTER TABLE intake_log ADD COLUMN reason_kind \(dialect.text);
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

    /// Migration 26 on either engine: the by-segment catch-up writes each aggregate row once
    /// for many subscriptions. A note it has taken (`claimed` 1) keeps the share the
    /// aggregates held (`applied`) and the share it sums (`taken`); `metric_segments_catchup`
    /// (one row, while a catch-up runs) names who runs it, when it last wrote, its phase and
    /// the last aggregate row written (`through_*`). Tables/SegmentCatchUp.swift states the invariant.
    static func segmentCatchUp(dialect d: SQLDialect) -> String {
        """
        ALTER TABLE metric_segments_pending ADD COLUMN claimed \(d.integer) NOT NULL DEFAULT 0;
        ALTER TABLE metric_segments_pending ADD COLUMN taken \(d.bytes);
        CREATE TABLE metric_segments_catchup (
            id \(d.integer) PRIMARY KEY CHECK (id = 1),
            owner \(d.text) NOT NULL,
            heartbeat_ms \(d.integer) NOT NULL,
            phase \(d.text) NOT NULL,
            through_dimension \(d.text),
            through_value \(d.text),
            through_key \(d.text),
            through_segment \(d.text),
            through_bucket \(d.integer)
        )\(d.withoutRowID);
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
}
