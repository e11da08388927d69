import Foundation
import XCTest
@testable import subdesk
import SubscriptionCore

/// An installed subdesk's hand-run commands read the package's config, which names the store
/// its services use; `doctor` names the config it read (or where it looked) and says when
/// this command's store is not the services'.
final class InstalledConfigDoctorTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "installed-doctor-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir + "/home", withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: dir)
    }

    func context(_ argv: [String], installed: String?, environment extra: [String: String] = [:]) throws -> Context {
        let arguments = Arguments.parse(argv, commands: CommandTable.standard)
        return try Context(arguments: arguments, environment: ["HOME": dir + "/home"].merging(extra) { $1 }, installedConfig: installed)
    }

    func checks(_ context: Context) -> [(name: String, level: String, detail: String)] {
        var out: [(String, String, String)] = []
        MaintenanceCommands.configFileChecks(context) { out.append(($0, $1, $2)) }
        return out
    }

    func installedConfig(db: String) throws -> String {
        let path = dir + "/etc-config"
        try "db = \(db)\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testDoctorNamesWhereItLookedWhenNoConfigWasFound() throws {
        let found = checks(try context(["doctor"], installed: nil))
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found[0].detail, "none: looked at \(dir)/home/.config/subdesk/config (the defaults apply)")
    }

    func testHandRunCommandsUseTheServicesStoreThroughTheInstalledConfig() throws {
        let installed = try installedConfig(db: dir + "/services.db")
        let c = try context(["doctor"], installed: installed)
        XCTAssertEqual(c.databasePath, dir + "/services.db")
        let found = checks(c)
        XCTAssertEqual(found.map(\.detail).first, installed)
        let services = try XCTUnwrap(found.first { $0.name == "services" })
        XCTAssertEqual(services.level, "ok")
        XCTAssertTrue(services.detail.contains("use this store too (\(dir)/services.db"), services.detail)
    }

    /// The trap the package had: a user's own default store, which no service reads.
    func testAStoreNoServiceReadsIsWarnedOfUnlessNamed() throws {
        let installed = try installedConfig(db: dir + "/services.db")
        let own = dir + "/home/.config/subdesk/config"
        try FileManager.default.createDirectory(atPath: dir + "/home/.config/subdesk", withIntermediateDirectories: true)
        try "bundle_id = com.example.app\n".write(toFile: own, atomically: true, encoding: .utf8)
        let unnamed = try XCTUnwrap(checks(try context(["doctor"], installed: installed)).first { $0.name == "services" })
        XCTAssertEqual(unnamed.level, "warn")
        XCTAssertTrue(unnamed.detail.contains("use \(dir)/services.db (named by \(installed))"), unnamed.detail)
        XCTAssertTrue(unnamed.detail.contains("which no service reads"), unnamed.detail)
        let named = try XCTUnwrap(checks(try context(["doctor", "--db", dir + "/other.db"], installed: installed)).first { $0.name == "services" })
        XCTAssertEqual(named.level, "ok", "a store named on purpose is the user's choice: \(named.detail)")
    }

    func testAnInstalledConfigWithoutDbMeansThePackagesDefaultStore() throws {
        let installed = dir + "/etc-config"
        try "bundle_id = com.example.app\n".write(toFile: installed, atomically: true, encoding: .utf8)
        let services = try XCTUnwrap(checks(try context(["doctor"], installed: installed)).first { $0.name == "services" })
        XCTAssertTrue(services.detail.contains("use \(Configuration.installedStore)"), services.detail)
    }

    /// The commands that work on their own stores or print subdesk's tables never read it;
    /// every command that opens the configured store does.
    func testDemoAndTheTablePrintersNeverReadTheInstalledConfig() {
        let own = Set(CommandTable.standard.commands.filter { !$0.installedConfig }.map(\.name))
        XCTAssertEqual(own, ["demo", "simulate", "generate", "keys", "commands", "man", "completions", "sample-config", "version"])
    }
}
