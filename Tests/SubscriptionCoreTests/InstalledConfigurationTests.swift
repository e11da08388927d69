import Foundation
import XCTest
@testable import SubscriptionCore

/// Which config file a command reads: a named one (`--config`, `SUBDESK_CONFIG`) must exist;
/// else the user's own; else, for a subdesk installed in a system folder, the package's
/// `/etc/subdesk/config`, skipped (with its path said) when this user may not read it.
final class InstalledConfigurationTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "installed-config-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir + "/home/.config/subdesk", withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: dir)
    }

    func write(_ path: String, _ text: String) throws -> String {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    var environment: [String: String] { ["HOME": dir + "/home"] }
    var userConfig: String { dir + "/home/.config/subdesk/config" }

    func testOnlyAnInstalledExecutableFallsBackToThePackagesConfig() {
        XCTAssertEqual(Configuration.installedPath(executablePath: "/usr/bin/subdesk"), "/etc/subdesk/config")
        XCTAssertEqual(Configuration.installedPath(executablePath: "/usr/local/bin/subdesk"), "/etc/subdesk/config")
        // A build folder (the test suite, `swift run`) and an unpacked tarball never read it.
        XCTAssertNil(Configuration.installedPath(executablePath: "/home/ana/src/subdesk/.build/debug/subdesk"))
        XCTAssertNil(Configuration.installedPath(executablePath: "/home/ana/opt/subdesk/usr/bin/subdesk"))
        XCTAssertNil(Configuration.installedPath(executablePath: Bundle.main.executablePath ?? ""),
                     "this test's own executable is a build folder's")
    }

    func testTheUsersOwnConfigWinsOverTheInstalledOne() throws {
        let installed = try write(dir + "/installed", "db = /var/lib/subdesk/subdesk.db\n")
        _ = try write(userConfig, "db = /home/ana/mine.db\n")
        let lookup = try Configuration.lookUp(named: nil, environment: environment, installed: installed)
        XCTAssertEqual(lookup.configuration.string(.db), "/home/ana/mine.db")
        XCTAssertEqual(lookup.lookedAt, [userConfig])
        XCTAssertEqual(lookup.skipped, [])
    }

    func testWithoutAConfigOfTheUsersTheInstalledOneIsRead() throws {
        let installed = try write(dir + "/installed", "db = /var/lib/subdesk/subdesk.db\n")
        let lookup = try Configuration.lookUp(named: nil, environment: environment, installed: installed)
        XCTAssertEqual(lookup.configuration.string(.db), "/var/lib/subdesk/subdesk.db")
        XCTAssertEqual(lookup.configuration.path, installed)
        XCTAssertEqual(lookup.lookedAt, [userConfig, installed])
        // Not installed: the same files, and the defaults.
        let none = try Configuration.lookUp(named: nil, environment: environment, installed: nil)
        XCTAssertNil(none.configuration.path)
        XCTAssertEqual(none.lookedAt, [userConfig])
    }

    func testAnInstalledConfigThisUserCannotReadIsSkippedNotAnError() throws {
        let installed = try write(dir + "/installed", "db = /var/lib/subdesk/subdesk.db\n")
        let lookup = try Configuration.lookUp(named: nil, environment: environment, installed: installed,
                                              readable: { $0 != installed })
        XCTAssertNil(lookup.configuration.path)
        XCTAssertNil(lookup.configuration.string(.db))
        XCTAssertEqual(lookup.skipped, [installed])
    }

    func testANamedConfigMustExistAndIsTheOnlyOneRead() throws {
        let installed = try write(dir + "/installed", "db = /var/lib/subdesk/subdesk.db\n")
        let named = try write(dir + "/named", "db = /srv/named.db\n")
        let byFlag = try Configuration.lookUp(named: named, environment: environment, installed: installed)
        XCTAssertEqual(byFlag.configuration.string(.db), "/srv/named.db")
        XCTAssertEqual(byFlag.lookedAt, [named])
        var env = environment
        env["SUBDESK_CONFIG"] = dir + "/missing"
        XCTAssertThrowsError(try Configuration.lookUp(named: nil, environment: env, installed: installed)) { error in
            XCTAssertTrue("\(error)".contains("\(self.dir)/missing does not exist"), "\(error)")
        }
    }

    func testThePackagesConfigNamesTheServicesStoreAndNothingElse() throws {
        let installed = try Configuration(text: Configuration.sampleFile(installed: true), source: "installed")
        XCTAssertEqual(installed.values.keys.sorted(), ["db"])
        XCTAssertEqual(installed.string(.db), Configuration.installedStore)
        XCTAssertEqual(installed.namedSections, [])
        let sample = try Configuration(text: Configuration.sampleFile(), source: "sample")
        XCTAssertEqual(sample.values, [:], "the sample keeps every key commented out")
    }

    /// A store made in a folder shared with its group (setgid, group-writable: the package's
    /// /var/lib/subdesk) is the group's too; anywhere else it is the owner's alone, whatever
    /// the umask.
    func testANewStoreInASharedFolderIsGroupWritable() throws {
        let shared = dir + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(shared, 0o2770), 0)
        let old = umask(0o077)
        defer { umask(old) }
        for (folder, want) in [(shared, 0o660), (dir, 0o600)] as [(String, mode_t)] {
            _ = try Store(path: folder + "/s.db", mode: .createIfMissing)
            var st = stat()
            XCTAssertEqual(stat(folder + "/s.db", &st), 0)
            XCTAssertEqual(st.st_mode & 0o777, want, "a store made in \(folder)")
        }
    }
}
