import XCTest
@testable import SubscriptionCore

/// doctor's rule on connection slots, as arithmetic: the limits of every login but intake's
/// (and a superuser's and the owner's) together must leave the owner 2 and intake 3 of the slots no superuser keeps. The
/// PostgreSQL 16 path (intake may use reserved_connections) is checked here only: the
/// server these tests start is 15.
final class ConnectionSlotsTests: XCTestCase {
    func slots(reserved: Int = 0, intakeUsesReserved: Bool = false, _ logins: [ConnectionSlots.Login]) -> ConnectionSlots {
        ConnectionSlots(maxConnections: 100, superuserReserved: 3, reserved: reserved, intakeUsesReserved: intakeUsesReserved, logins: logins)
    }

    func testReadAndSupportLimitsMustLeaveTheOwnerAndIntakeTheirSlots() {
        let people = [ConnectionSlots.Login(name: "mgr", roles: ["subdesk_read"], limit: 45, superuser: false),
                      ConnectionSlots.Login(name: "desk", roles: ["subdesk_support"], limit: 47, superuser: false)]
        // Neither intake's logins, nor a superuser, nor the owner count against the rule.
        let others = [ConnectionSlots.Login(name: "hook", roles: ["subdesk_intake"], limit: nil, superuser: false),
                      ConnectionSlots.Login(name: "dba", roles: PostgresRoles.all, limit: nil, superuser: true),
                      ConnectionSlots.Login(name: "keeper", roles: PostgresRoles.all, limit: nil, superuser: false, owner: true)]
        let fits = slots(people + others)
        XCTAssertEqual(fits.ordinary, 97)
        XCTAssertEqual(fits.left, 5)
        XCTAssertEqual(fits.verdicts.map(\.level), ["ok"])

        var tight = people
        tight[1].limit = 48
        let over = slots(tight + others)
        XCTAssertEqual(over.verdicts.map(\.level), ["fail"])
        XCTAssertTrue(over.verdicts[0].detail.contains("(mgr 45, desk 48) together take 93 of 97 slots"), over.verdicts[0].detail)

        // On PostgreSQL 16 the reserved connections are no ordinary slots, but count toward
        // intake's when it may use them.
        var fewer = people
        fewer[1].limit = 45
        let sixteen = slots(reserved: 5, intakeUsesReserved: true, fewer + others)
        XCTAssertEqual(sixteen.ordinary, 92)
        XCTAssertEqual(sixteen.needed, 2)
        XCTAssertEqual(sixteen.left, 2)
        XCTAssertEqual(sixteen.verdicts.map(\.level), ["ok"])
        XCTAssertTrue(sixteen.verdicts[0].detail.contains("5 reserved_connections (intake may use them)"), sixteen.verdicts[0].detail)
        XCTAssertEqual(slots(reserved: 5, intakeUsesReserved: false, fewer + others).verdicts.map(\.level), ["fail"])

        // A read or support login without a limit is named.
        let loose = slots(people + [ConnectionSlots.Login(name: "temp", roles: ["subdesk_read"], limit: nil, superuser: false)])
        XCTAssertEqual(loose.verdicts.map(\.level), ["warn", "ok"])
        XCTAssertTrue(loose.verdicts[0].detail.contains("without a connection limit: temp"), loose.verdicts[0].detail)
    }

    /// An operator's login takes slots as a reader's does, and so does one in several roles:
    /// each is counted, and one without a limit is named.
    func testOperatorLoginsAndOnesInSeveralRolesCountAndAreNamedWithoutALimit() {
        let people = [ConnectionSlots.Login(name: "mgr", roles: ["subdesk_read"], limit: 45, superuser: false),
                      ConnectionSlots.Login(name: "ops", roles: ["subdesk_operator"], limit: 47, superuser: false)]
        let over = slots(people + [ConnectionSlots.Login(name: "both", roles: ["subdesk_operator", "subdesk_read"], limit: 3, superuser: false)])
        XCTAssertEqual(over.verdicts.map(\.level), ["fail"])
        XCTAssertTrue(over.verdicts[0].detail.contains("(mgr 45, ops 47, both 3) together take 95 of 97 slots"), over.verdicts[0].detail)
        let loose = slots(people + [ConnectionSlots.Login(name: "both", roles: ["subdesk_operator", "subdesk_read"], limit: nil, superuser: false),
                                    ConnectionSlots.Login(name: "runner", roles: ["subdesk_operator"], limit: nil, superuser: false)])
        XCTAssertEqual(loose.verdicts.map(\.level), ["warn", "ok"])
        XCTAssertTrue(loose.verdicts[0].detail.contains("without a connection limit: both, runner"), loose.verdicts[0].detail)
    }

    /// The README's table of each role's login defaults is `PostgresLogin.defaults`.
    func testTheReadmeShowsTheLoginDefaults() throws {
        let readme = try String(contentsOf: RoleTableTests.readme, encoding: .utf8)
        let table = PostgresLogin.markdown.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
        XCTAssertTrue(readme.contains(table), "README.md's login defaults differ from PostgresLogin.defaults; they should read:\n\(table)")
        XCTAssertEqual(PostgresLogin.roleOrder.map { "subdesk_" + $0 }.sorted(), PostgresRoles.all.sorted())
        // Intake's lock wait ends before its busy wait (Store's default busy timeout) does.
        XCTAssertLessThan(try XCTUnwrap(PostgresLogin.defaults["subdesk_intake"]).lockTimeoutMs, Int(Store.defaultBusyTimeoutMs))
    }
}
