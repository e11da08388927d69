/// Aggregates daily counts are built from. Time is cut in 15-minute buckets, fine enough
/// for every time zone's day boundary (all offsets are multiples of 15 minutes).
public struct MetricsBucket: Equatable, Sendable {
    public var bucketStart: Millis
    public var key: String
    public var segment: CountSegment
    public var count: Int
}

/// Subscriptions counted apart: paid Production ones, family-shared access, and sandbox.
public enum CountSegment: String, CaseIterable, Sendable {
    case paid, familyShared = "family_shared", sandbox

    static let sql = """
        CASE WHEN IFNULL(%env, 'Production') <> 'Production' THEN 'sandbox'
             WHEN %own = 'FAMILY_SHARED' THEN 'family_shared' ELSE 'paid' END
        """

    static func sql(environment: String, ownership: String) -> String {
        sql.replacingOccurrences(of: "%env", with: environment).replacingOccurrences(of: "%own", with: ownership)
    }
}

extension Store {
    public static let metricsBucketMs: Millis = 900_000

    /// Notifications signed in [from, to), counted per bucket, `TYPE/SUBTYPE` and segment.
    public func notificationBuckets(from: Millis, to: Millis) throws -> [MetricsBucket] {
        try db.rows("""
            SELECT (signed_ms / \(Store.metricsBucketMs)) * \(Store.metricsBucketMs) AS b,
                   type || IFNULL('/' || subtype, '') AS k,
                   \(CountSegment.sql(environment: "environment", ownership: "ownership")) AS seg, count(*)
            FROM notifications WHERE signed_ms >= ? AND signed_ms < ? GROUP BY b, k, seg
            """, [from, to]) { r in
            MetricsBucket(bucketStart: r.int64(0), key: r.string(1), segment: CountSegment(rawValue: r.string(2)) ?? .paid, count: r.int(3))
        }
    }

    /// Transactions that count toward being subscribed: not revoked, not superseded by an upgrade.
    static let countedTransactions = "revocation_ms IS NULL AND is_upgraded = 0 AND expires_ms IS NOT NULL"

    /// Starts (`start`, `trial_start`) and ends (`end`, `trial_end`) of subscribed periods in [from, to),
    /// plus paid periods that follow a free trial (`conversion`), per bucket and segment.
    public func periodBuckets(from: Millis, to: Millis) throws -> [MetricsBucket] {
        let seg = CountSegment.sql(environment: "environment", ownership: "ownership")
        let trial = "IFNULL(offer_discount_type, '') = 'FREE_TRIAL'"
        var result: [MetricsBucket] = []
        let map: (SQLRow) -> MetricsBucket = { r in
            MetricsBucket(bucketStart: r.int64(0), key: r.string(1), segment: CountSegment(rawValue: r.string(2)) ?? .paid, count: r.int(3))
        }
        result += try db.rows("""
            SELECT (purchase_ms / \(Store.metricsBucketMs)) * \(Store.metricsBucketMs) AS b,
                   CASE WHEN \(trial) THEN 'trial_start' ELSE 'start' END AS k, \(seg) AS seg, count(*)
            FROM transactions WHERE \(Store.countedTransactions) AND purchase_ms >= ? AND purchase_ms < ?
            GROUP BY b, k, seg
            """, [from, to], map)
        result += try db.rows("""
            SELECT (expires_ms / \(Store.metricsBucketMs)) * \(Store.metricsBucketMs) AS b,
                   CASE WHEN \(trial) THEN 'trial_end' ELSE 'end' END AS k, \(seg) AS seg, count(*)
            FROM transactions WHERE \(Store.countedTransactions) AND expires_ms >= ? AND expires_ms < ?
            GROUP BY b, k, seg
            """, [from, to], map)
        result += try db.rows("""
            SELECT (t.purchase_ms / \(Store.metricsBucketMs)) * \(Store.metricsBucketMs) AS b, 'conversion',
                   \(CountSegment.sql(environment: "t.environment", ownership: "t.ownership")) AS seg, count(*)
            FROM transactions t
            WHERE t.purchase_ms >= ? AND t.purchase_ms < ? AND t.revocation_ms IS NULL
              AND IFNULL(t.offer_discount_type, '') <> 'FREE_TRIAL'
              AND EXISTS (SELECT 1 FROM transactions p WHERE p.original_transaction_id = t.original_transaction_id
                          AND p.offer_discount_type = 'FREE_TRIAL' AND p.purchase_ms < t.purchase_ms
                          AND p.expires_ms >= t.purchase_ms - 86400000)
            GROUP BY b, seg
            """, [from, to], map)
        return result
    }

    /// Periods running at `instant`, per segment: (all, free trials).
    public func periodsRunning(at instant: Millis) throws -> [CountSegment: (all: Int, trials: Int)] {
        var result: [CountSegment: (all: Int, trials: Int)] = [:]
        try db.query("""
            SELECT \(CountSegment.sql(environment: "environment", ownership: "ownership")) AS seg, count(*),
                   sum(IFNULL(offer_discount_type, '') = 'FREE_TRIAL')
            FROM transactions WHERE \(Store.countedTransactions) AND purchase_ms <= ? AND expires_ms > ?
            GROUP BY seg
            """, [instant, instant]) { r in
            result[CountSegment(rawValue: r.string(0)) ?? .paid] = (r.int(1), r.int(2))
        }
        return result
    }

    /// Billing events (failures, recoveries, expiries, renewals) signed in [from, to), in order,
    /// to replay who was in grace or billing retry at each day's end.
    public func billingEvents(from: Millis, to: Millis) throws -> [(otid: String, date: Millis, key: String, segment: CountSegment)] {
        try db.rows("""
            SELECT original_transaction_id, signed_ms, type || IFNULL('/' || subtype, ''),
                   \(CountSegment.sql(environment: "environment", ownership: "ownership"))
            FROM notifications
            WHERE signed_ms >= ? AND signed_ms < ? AND original_transaction_id IS NOT NULL
              AND type IN ('DID_FAIL_TO_RENEW', 'GRACE_PERIOD_EXPIRED', 'DID_RENEW', 'EXPIRED', 'SUBSCRIBED',
                           'REFUND', 'REVOKE', 'DID_RECOVER', 'INTERACTIVE_RENEWAL')
            ORDER BY signed_ms, notification_uuid
            """, [from, to]) { r in
            (r.string(0), r.int64(1), r.string(2), CountSegment(rawValue: r.string(3)) ?? .paid)
        }
    }
}
