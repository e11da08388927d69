/// The PostgreSQL schema: the same tables, columns and meaning as SQLite's migrations 1-N.
///
/// A new store gets `sql`, the state after SQLite's migration `baseVersion`, at once. Each
/// later SQLite migration N gets its PostgreSQL form in `upgrades` under the same number,
/// so a schema version means the same thing on both engines. The search index (SQLite's
/// migration 9) has no counterpart: PostgreSQL tests each row's search text instead.
/// `SchemaParityTests` proves the two equal after `db init` (version, tables, columns in
/// order with type class, nullability and default, named indexes, triggers), save the
/// differences it lists with their reasons.
enum PostgresSchema {
    /// The SQLite migration number whose final state `sql` matches.
    static let baseVersion = 15
    /// Later migrations, numbered as SQLite's.
    static let upgrades: [(version: Int, sql: String)] = [
        (16, """
        DELETE FROM verified_chains;
        ALTER TABLE verified_chains ADD COLUMN seal BYTEA;
        """),
        (17, """
        CREATE INDEX IF NOT EXISTS notifications_rescind ON notifications(signed_ms) WHERE type = 'RESCIND_CONSENT';
        """),
        (18, """
        CREATE TABLE intake_counts (
            environment TEXT COLLATE "C" NOT NULL,
            type TEXT COLLATE "C" NOT NULL,
            outcome TEXT COLLATE "C" NOT NULL,
            reason TEXT COLLATE "C" NOT NULL,
            count BIGINT NOT NULL,
            last_ms BIGINT NOT NULL,
            PRIMARY KEY (environment, type, outcome, reason)
        );
        \(Migrations.intakeCountsBackfill(dialect: .postgres))
        CREATE INDEX audit_log_action ON audit_log(action, at_ms);
        """),
        (19, """
        INSERT INTO metrics_pending SELECT original_transaction_id FROM subscriptions ON CONFLICT DO NOTHING;
        """),
        (20, """
        INSERT INTO metrics_pending SELECT original_transaction_id FROM subscriptions ON CONFLICT DO NOTHING;
        """),
        (21, """
        -- Support drops the subscriber a link left owning nothing through this function, run
        -- as the owner, instead of holding DELETE on subscribers (which would let it LOCK the
        -- table in any mode and stall intake). Its search path is the store's schema, then
        -- pg_temp, so a caller's temporary table cannot stand in for a store table.
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
        (22, Migrations.refusalKinds(dialect: .postgres)),
        (24, Migrations.segmentCatchUp(dialect: .postgres)),
    ]
    static var version: Int { upgrades.last?.version ?? baseVersion }

    /// The triggers that keep the audit log append-only; `doctor` reports any that is
    /// missing or disabled.
    static let auditGuards = ["audit_log_no_update", "audit_log_no_delete", "audit_log_no_truncate", "audit_log_operator"]

    /// Each audit trigger, the function it calls, and its `pg_trigger.tgtype` (bits: 1 for
    /// each row, 2 before, 4 insert, 8 delete, 16 update, 32 truncate): `doctor` checks all
    /// three, since a trigger that exists but fires on something else guards nothing.
    static let auditTriggers: [(name: String, function: String, type: Int)] = [
        ("audit_log_no_update", "audit_log_append_only", 1 | 2 | 16),
        ("audit_log_no_delete", "audit_log_append_only", 1 | 2 | 8),
        ("audit_log_no_truncate", "audit_log_append_only", 2 | 32),
        ("audit_log_operator", "audit_log_operator", 1 | 2 | 4),
    ]

    /// The bodies of the audit log's trigger functions, as `sql` creates them, so `doctor`
    /// can tell one replaced (CREATE OR REPLACE FUNCTION ... RETURN NEW) from the original.
    static let auditFunctionBodies: [String: String] = [
        "audit_log_append_only": """

            BEGIN
                RAISE EXCEPTION 'audit_log is append-only';
                RETURN NULL;
            END

            """,
        "audit_log_operator": """

            BEGIN
                NEW.operator := session_user;
                RETURN NEW;
            END;

            """,
    ]

    /// Creates every table, index, function and trigger in the current schema (search_path). Runs in one transaction.
    ///
    /// Every table keeps SQLite's column order (columns that later migrations added come
    /// last, in migration order), so a copy between engines can go column by column.
    /// Every text column is `COLLATE "C"`: it sorts and compares bytewise, as in SQLite.
    /// The statements hold no BEGIN or COMMIT: the caller's transaction holds them.
    static let sql: String = """
        -- Migration 1.
        CREATE TABLE subscribers (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            user_id TEXT COLLATE "C" UNIQUE,
            app_account_token TEXT COLLATE "C" UNIQUE,
            created_ms BIGINT NOT NULL
        );
        CREATE TABLE subscriptions (
            original_transaction_id TEXT COLLATE "C" PRIMARY KEY,
            subscriber_id BIGINT NOT NULL REFERENCES subscribers(id),
            product_id TEXT COLLATE "C" NOT NULL,
            status BIGINT NOT NULL,
            entitled BIGINT NOT NULL,
            expires_ms BIGINT,
            purchase_ms BIGINT,
            original_purchase_ms BIGINT,
            latest_transaction_id TEXT COLLATE "C",
            auto_renew BIGINT NOT NULL,
            auto_renew_product_id TEXT COLLATE "C",
            pending_change_kind TEXT COLLATE "C",
            pending_change_product_id TEXT COLLATE "C",
            grace_expires_ms BIGINT,
            billing_retry BIGINT NOT NULL,
            expiration_intent BIGINT,
            price_increase_status BIGINT,
            offer_type BIGINT,
            offer_identifier TEXT COLLATE "C",
            offer_discount_type TEXT COLLATE "C",
            is_trial BIGINT NOT NULL,
            ownership TEXT COLLATE "C" NOT NULL,
            environment TEXT COLLATE "C" NOT NULL,
            app_account_token TEXT COLLATE "C",
            upgraded_from TEXT COLLATE "C",
            revoked_transactions TEXT COLLATE "C",
            last_event_ms BIGINT,
            last_notification_type TEXT COLLATE "C",
            updated_ms BIGINT NOT NULL,
            -- This subscription's share of metric_buckets (MetricContributions, encoded).
            metrics BYTEA
        );
        CREATE INDEX subscriptions_subscriber ON subscriptions(subscriber_id);
        CREATE INDEX subscriptions_product ON subscriptions(product_id, original_transaction_id);
        -- (subscriptions_status_expires: dropped by migration 5.)
        CREATE INDEX subscriptions_expires ON subscriptions(COALESCE(expires_ms, 0), original_transaction_id);
        CREATE INDEX subscriptions_last_event ON subscriptions(COALESCE(last_event_ms, 0), original_transaction_id);
        CREATE INDEX subscriptions_status_page ON subscriptions(status, COALESCE(expires_ms, 0), original_transaction_id);
        CREATE INDEX subscriptions_token ON subscriptions(app_account_token);

        CREATE TABLE transactions (
            transaction_id TEXT COLLATE "C" PRIMARY KEY,
            original_transaction_id TEXT COLLATE "C" NOT NULL,
            product_id TEXT COLLATE "C" NOT NULL,
            subscription_group TEXT COLLATE "C",
            purchase_ms BIGINT NOT NULL,
            original_purchase_ms BIGINT,
            expires_ms BIGINT,
            revocation_ms BIGINT,
            revocation_reason BIGINT,
            is_upgraded BIGINT NOT NULL,
            offer_type BIGINT,
            offer_identifier TEXT COLLATE "C",
            offer_discount_type TEXT COLLATE "C",
            ownership TEXT COLLATE "C" NOT NULL,
            transaction_reason TEXT COLLATE "C",
            price BIGINT,
            currency TEXT COLLATE "C",
            environment TEXT COLLATE "C" NOT NULL,
            app_account_token TEXT COLLATE "C",
            signed_ms BIGINT NOT NULL,
            web_order_line_item_id TEXT COLLATE "C",
            bundle_id TEXT COLLATE "C",
            type TEXT COLLATE "C",
            storefront TEXT COLLATE "C",
            -- Migration 7.
            notification_signed_ms BIGINT,
            source_uuid TEXT COLLATE "C",
            payload BYTEA,
            app_transaction_id TEXT COLLATE "C"
        );
        CREATE INDEX transactions_original ON transactions(original_transaction_id);
        CREATE INDEX transactions_purchase ON transactions(purchase_ms);

        CREATE TABLE renewal_info (
            original_transaction_id TEXT COLLATE "C" PRIMARY KEY,
            product_id TEXT COLLATE "C",
            auto_renew_product_id TEXT COLLATE "C",
            auto_renew BIGINT NOT NULL,
            expiration_intent BIGINT,
            billing_retry BIGINT NOT NULL,
            grace_expires_ms BIGINT,
            price_increase_status BIGINT,
            offer_type BIGINT,
            offer_identifier TEXT COLLATE "C",
            renewal_ms BIGINT,
            renewal_price BIGINT,
            currency TEXT COLLATE "C",
            environment TEXT COLLATE "C" NOT NULL,
            signed_ms BIGINT NOT NULL,
            -- Migration 7.
            notification_signed_ms BIGINT,
            source_uuid TEXT COLLATE "C",
            payload BYTEA
        );

        CREATE TABLE notifications (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            notification_uuid TEXT COLLATE "C" NOT NULL UNIQUE,
            version BIGINT NOT NULL,
            type TEXT COLLATE "C" NOT NULL,
            subtype TEXT COLLATE "C",
            signed_ms BIGINT NOT NULL,
            received_ms BIGINT NOT NULL,
            original_transaction_id TEXT COLLATE "C",
            transaction_id TEXT COLLATE "C",
            product_id TEXT COLLATE "C",
            environment TEXT COLLATE "C",
            ownership TEXT COLLATE "C",
            body_sha256 TEXT COLLATE "C" NOT NULL,
            -- 0: the body as received; 1: CompactBody format 1 (headers in jws_headers).
            body_format BIGINT NOT NULL DEFAULT 0,
            body BYTEA NOT NULL,
            source TEXT COLLATE "C"
        );
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
        CREATE INDEX notifications_original ON notifications(original_transaction_id, signed_ms);
        CREATE INDEX notifications_received ON notifications(received_ms);
        CREATE INDEX notifications_signed ON notifications(signed_ms);
        CREATE INDEX notifications_digest ON notifications(body_sha256);

        CREATE TABLE quarantine (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            received_ms BIGINT NOT NULL,
            reason TEXT COLLATE "C" NOT NULL,
            body BYTEA NOT NULL,
            body_sha256 TEXT COLLATE "C" NOT NULL,
            source TEXT COLLATE "C",
            -- Migration 3: a quarantined body is never deleted; a successful replay marks it resolved.
            resolved_ms BIGINT,
            resolution TEXT COLLATE "C",
            -- Migration 6: a rejected body seen again is counted, not stored again; one over the
            -- size limit or past the quarantine's budget keeps a prefix (or nothing) with its
            -- true length.
            body_bytes BIGINT,
            times_seen BIGINT NOT NULL DEFAULT 1,
            last_seen_ms BIGINT
        );
        CREATE INDEX quarantine_received ON quarantine(received_ms);

        -- Daily counts' aggregates per hour bucket: notification counts (n:TYPE/SUBTYPE)
        -- and period starts, ends and level changes (p:...), per segment.
        CREATE TABLE metric_buckets (
            bucket BIGINT NOT NULL,
            key TEXT COLLATE "C" NOT NULL,
            segment TEXT COLLATE "C" NOT NULL,
            delta BIGINT NOT NULL,
            PRIMARY KEY (bucket, key, segment)
        );
        -- How many subscriptions have each status, kept with every save, so the
        -- dashboard's status tabs need not count a million rows at launch. (In SQLite
        -- `status INTEGER PRIMARY KEY` is a rowid alias, but it is always given: a status,
        -- not a generated id, so no identity here.)
        CREATE TABLE status_counts (
            status BIGINT PRIMARY KEY,
            count BIGINT NOT NULL
        );

        -- Levels at a range's start sum one key's history; this covers that read.
        CREATE INDEX metric_buckets_key ON metric_buckets(key, segment, bucket, delta);

        -- Every body's outcome, in arrival order, for the live feed.
        CREATE TABLE intake_log (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            received_ms BIGINT NOT NULL,
            result TEXT COLLATE "C" NOT NULL,
            notification_uuid TEXT COLLATE "C",
            type TEXT COLLATE "C",
            subtype TEXT COLLATE "C",
            original_transaction_id TEXT COLLATE "C",
            product_id TEXT COLLATE "C",
            environment TEXT COLLATE "C",
            detail TEXT COLLATE "C",
            -- Migration 10: where each intake outcome came from, so the feed can mark
            -- backfilled notifications.
            source TEXT COLLATE "C"
        );
        CREATE INDEX intake_log_received ON intake_log(received_ms);

        -- Migration 2.
        -- Operator actions, append-only: the database itself refuses changes.
        CREATE TABLE audit_log (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            at_ms BIGINT NOT NULL,
            operator TEXT COLLATE "C" NOT NULL,
            action TEXT COLLATE "C" NOT NULL,
            target TEXT COLLATE "C",
            reason TEXT COLLATE "C",
            outcome TEXT COLLATE "C" NOT NULL,
            detail TEXT COLLATE "C"
        );
        CREATE INDEX audit_log_target ON audit_log(target, at_ms);
        CREATE INDEX audit_log_at ON audit_log(at_ms);
        CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$\(auditFunctionBodies["audit_log_append_only"]!)$$;
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
        CREATE FUNCTION audit_log_operator() RETURNS trigger LANGUAGE plpgsql AS $$\(auditFunctionBodies["audit_log_operator"]!)$$;
        CREATE TRIGGER audit_log_operator BEFORE INSERT ON audit_log
            FOR EACH ROW EXECUTE FUNCTION audit_log_operator();
        -- No audit_log_no_replace (SQLite's migration 6): it exists because SQLite's
        -- INSERT OR REPLACE deletes a conflicting row without firing the delete trigger.
        -- PostgreSQL has no REPLACE: an insert naming an id that exists fails on the
        -- primary key (or, with ON CONFLICT DO UPDATE, fires audit_log_no_update), and
        -- nothing deletes a row without firing audit_log_no_delete (TRUNCATE aside,
        -- refused above).

        CREATE TABLE overrides (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            original_transaction_id TEXT COLLATE "C" NOT NULL,
            kind TEXT COLLATE "C" NOT NULL CHECK (kind IN ('grant', 'revoke')),
            until_ms BIGINT,
            reason TEXT COLLATE "C" NOT NULL,
            operator TEXT COLLATE "C" NOT NULL,
            created_ms BIGINT NOT NULL,
            lifted_ms BIGINT,
            lifted_by TEXT COLLATE "C",
            lift_reason TEXT COLLATE "C"
        );
        CREATE INDEX overrides_target ON overrides(original_transaction_id, created_ms);

        -- The latest receipt per subscription, for verifyReceipt revalidation.
        CREATE TABLE receipts (
            original_transaction_id TEXT COLLATE "C" PRIMARY KEY,
            latest_receipt TEXT COLLATE "C" NOT NULL,
            updated_ms BIGINT NOT NULL
        );

        -- Migration 6 (the quarantine's columns are above).
        CREATE INDEX quarantine_digest ON quarantine(body_sha256, resolved_ms);

        -- Migration 4.
        -- Signing chains that passed a full check, so a later process (a CGI request)
        -- need not check them again: keyed by the chain's SHA-256 and the roots'.
        CREATE TABLE verified_chains (
            chain_hash BYTEA NOT NULL,
            roots_hash BYTEA NOT NULL,
            entry_lengths TEXT COLLATE "C" NOT NULL,
            subjects TEXT COLLATE "C" NOT NULL,
            valid_from_s BIGINT NOT NULL,
            valid_until_s BIGINT NOT NULL,
            checked_ms BIGINT NOT NULL,
            PRIMARY KEY (chain_hash, roots_hash)
        );

        -- Migration 7 (the columns are above).
        -- RESCIND_CONSENT names the app transaction; this finds the subscription it concerns.
        CREATE INDEX transactions_app_transaction ON transactions(app_transaction_id) WHERE app_transaction_id IS NOT NULL;

        -- Migration 8.
        -- Facts about the store itself: `kind = demo` marks a store `subdesk demo` built, the
        -- only kind it may replace.
        CREATE TABLE store_facts (
            key TEXT COLLATE "C" PRIMARY KEY,
            value TEXT COLLATE "C" NOT NULL
        );

        -- Migration 9 (subscription_search, subscription_search_terms, search_pending and
        -- their triggers) has no counterpart: search on PostgreSQL tests each row's search
        -- text (Migrations.searchText, dialect .postgres) directly, with no index.

        -- Migration 10.
        -- A backfill from Get Notification History: its window, how far it got (the token of
        -- the next page, kept with each page's notifications so a run resumes exactly), and
        -- what it found.
        CREATE TABLE backfill_runs (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            environment TEXT COLLATE "C" NOT NULL,
            since_ms BIGINT NOT NULL,
            until_ms BIGINT NOT NULL,
            only_failures BIGINT NOT NULL,
            operator TEXT COLLATE "C" NOT NULL,
            started_ms BIGINT NOT NULL,
            finished_ms BIGINT,
            next_page TEXT COLLATE "C",
            pages BIGINT NOT NULL DEFAULT 0,
            new BIGINT NOT NULL DEFAULT 0,
            duplicates BIGINT NOT NULL DEFAULT 0,
            rejected BIGINT NOT NULL DEFAULT 0
        );
        -- Notifications Apple says it sent that first reached this store through a backfill,
        -- with Apple's delivery attempts as it reported them (JSON).
        CREATE TABLE delivery_gaps (
            notification_uuid TEXT COLLATE "C" PRIMARY KEY,
            backfill_run BIGINT NOT NULL REFERENCES backfill_runs(id),
            send_attempts TEXT COLLATE "C" NOT NULL,
            found_ms BIGINT NOT NULL
        );

        -- Migration 11.
        -- Renewal-date extensions asked of Apple: one subscription's, or every active
        -- subscriber's of a product (original_transaction_id NULL), with what Apple answered.
        CREATE TABLE renewal_extensions (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            request_identifier TEXT COLLATE "C" NOT NULL UNIQUE,
            original_transaction_id TEXT COLLATE "C",
            product_id TEXT COLLATE "C",
            storefronts TEXT COLLATE "C",
            days BIGINT NOT NULL,
            reason_code BIGINT NOT NULL,
            reason TEXT COLLATE "C" NOT NULL,
            operator TEXT COLLATE "C" NOT NULL,
            requested_ms BIGINT NOT NULL,
            outcome TEXT COLLATE "C" NOT NULL,
            effective_ms BIGINT,
            succeeded BIGINT,
            failed BIGINT,
            completed_ms BIGINT
        );
        CREATE INDEX renewal_extensions_target ON renewal_extensions(original_transaction_id, requested_ms);

        -- Migration 12.
        -- Refund requests: every CONSUMPTION_REQUEST opens one (Apple wants the consumption
        -- information within 12 hours of asking); the first REFUND or REFUND_DECLINED of the
        -- same transaction signed at or after it closes it, whichever arrives first.
        CREATE TABLE refund_requests (
            notification_uuid TEXT COLLATE "C" PRIMARY KEY,
            original_transaction_id TEXT COLLATE "C",
            transaction_id TEXT COLLATE "C",
            environment TEXT COLLATE "C",
            requested_ms BIGINT NOT NULL,
            -- The last answer sent, as JSON, who sent it, when, and what Apple said to it
            -- ('accepted' or 'refused: ...').
            answer TEXT COLLATE "C",
            answered_by TEXT COLLATE "C",
            answered_ms BIGINT,
            answer_outcome TEXT COLLATE "C",
            -- When subdesk noticed (and audited) that the deadline passed unanswered.
            missed_ms BIGINT,
            closed_ms BIGINT,
            closed_by TEXT COLLATE "C",
            closing_uuid TEXT COLLATE "C"
        );
        CREATE INDEX refund_requests_queue ON refund_requests(closed_ms, requested_ms);
        CREATE INDEX refund_requests_transaction ON refund_requests(transaction_id);
        -- The trigger functions name tables without a schema; SET search_path FROM CURRENT
        -- keeps them on this store's tables (as a SQLite trigger's are) whatever the
        -- inserting session's search_path is. Of refunds signed at the same millisecond the
        -- first stored closes: the order SQLite's notifications_original index (ties in
        -- rowid order) gives them, where its ORDER BY alone leaves the choice open.
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

        -- Migration 13.
        -- Subscriptions whose share of the counts predates the metrics derived from
        -- transactions (new paid, churn, refunds...): Store.catchUpMetrics recomputes them.
        CREATE TABLE metrics_pending (original_transaction_id TEXT COLLATE "C" PRIMARY KEY);

        -- Migration 14 only noted every subscription pending again: nothing to create.

        -- Migration 15.
        -- The counts by product, subscription group, storefront and offer type: every
        -- aggregate once per dimension, with its value. Kept up by Store.catchUpSegments
        -- from the subscriptions noted pending (with the share the aggregates last took),
        -- when a report by segment asks.
        CREATE TABLE metric_segments (
            dimension TEXT COLLATE "C" NOT NULL,
            value TEXT COLLATE "C" NOT NULL,
            key TEXT COLLATE "C" NOT NULL,
            segment TEXT COLLATE "C" NOT NULL,
            bucket BIGINT NOT NULL,
            delta BIGINT NOT NULL,
            PRIMARY KEY (dimension, value, key, segment, bucket)
        );
        CREATE TABLE metric_segments_pending (original_transaction_id TEXT COLLATE "C" PRIMARY KEY, applied BYTEA);

        -- PostgreSQL only: the schema's version (SQLite keeps it in PRAGMA user_version) and
        -- a counter every write commit bumps (SQLite's PRAGMA data_version).
        CREATE TABLE schema_version (version BIGINT NOT NULL);
        INSERT INTO schema_version (version) VALUES (\(PostgresSchema.baseVersion));
        CREATE TABLE store_changes (
            id SMALLINT PRIMARY KEY CHECK (id = 1),
            version BIGINT NOT NULL
        );
        INSERT INTO store_changes (id, version) VALUES (1, 0)
        """
}
