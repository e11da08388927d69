import Foundation
import XCTest
@testable import TerminalUI

/// The package's `themes/` directory, found from this file's location.
private let themesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("themes").path

final class ShippedThemeTests: XCTestCase {
    func testAllShippedThemesParseWithoutWarnings() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: themesDirectory).filter { $0.hasSuffix(".theme") }
        XCTAssertEqual(Set(files), ["default.theme", "mono.theme", "midnight.theme"])
        for file in files {
            let result = try Theme.load(path: themesDirectory + "/" + file)
            XCTAssertEqual(result.warnings, [], file)
        }
    }

    func testDefaultThemeFileSetsEveryKeyAndMatchesTheBuiltIn() throws {
        // Parsing over a base where every style is distinctive shows that no key was left to fall back.
        let poison = Theme(name: "poison", styles: Dictionary(uniqueKeysWithValues: StyleRole.allCases.map {
            ($0, ThemeStyle(fg: .index(201), bg: .index(202), attributes: [.reverse, .dim]))
        }))
        let result = try Theme.load(path: themesDirectory + "/default.theme", base: poison)
        XCTAssertEqual(result.theme.styles, Theme.standard.styles)
        XCTAssertEqual(result.theme.name, "default")
        XCTAssertEqual(result.theme.colorsRequired, 8)
    }

    func testMonoThemeFileMatchesTheBuiltInAndUsesNoColour() throws {
        let result = try Theme.load(name: "mono", searchPaths: [themesDirectory])
        XCTAssertEqual(result.path, themesDirectory + "/mono.theme")
        XCTAssertEqual(result.theme.styles, Theme.monochrome.styles)
        XCTAssertEqual(result.theme.colorsRequired, 0)
        XCTAssertEqual(Theme.monochrome[.selection].attributes, [.reverse])
    }

    func testMidnightNeeds256ColoursAndDowngradesLegibly() throws {
        let midnight = try Theme.load(name: "midnight", searchPaths: [themesDirectory]).theme
        XCTAssertTrue(midnight.needs256Colors)
        XCTAssertEqual(midnight[.normal].bg, .index(234), "#1c1c1c maps onto the grey ramp")
        XCTAssertEqual(midnight[.selection].bg, .index(25), "#005faf is a cube colour")

        let basic = midnight.downgraded(toColors: 8)
        XCTAssertEqual(basic.colorsRequired, 8)
        for role in StyleRole.allCases where midnight[role].fg != midnight[role].bg {
            XCTAssertNotEqual(basic[role].fg, basic[role].bg, "\(role) would be invisible")
        }
        XCTAssertEqual(basic[.normal].bg, .black)

        let none = midnight.downgraded(toColors: 2)
        XCTAssertEqual(none.colorsRequired, 0)
        XCTAssertTrue(none[.selection].attributes.contains(.reverse), "selection stays visible without colour")
        XCTAssertEqual(Theme.standard.downgraded(toColors: 8), Theme.standard)
    }

    func testEveryRoleHasAStyleInEveryShippedTheme() throws {
        for name in ["default", "mono", "midnight"] {
            let theme = try Theme.load(name: name, searchPaths: [themesDirectory]).theme
            XCTAssertEqual(theme.styles.count, StyleRole.allCases.count, name)
        }
    }
}

final class ThemeParserTests: XCTestCase {
    func testMissingKeysFallBackToTheDefaultTheme() throws {
        let result = try ThemeParser.parse("title_fg = red\n", file: "themes/x.theme")
        XCTAssertEqual(result.theme.name, "x")
        XCTAssertEqual(result.theme[.title], ThemeStyle(fg: .red, attributes: [.bold]), "attributes still come from the default")
        for role in StyleRole.allCases where role != .title {
            XCTAssertEqual(result.theme[role], Theme.standard[role], role.rawValue)
        }
    }

    func testMalformedLineIsAnErrorWithFileAndLine() {
        let text = """
        # a theme
        normal_fg = default

        title_fg = cyan
        title_attr = bold
        # the next line is wrong
        border blue
        """
        XCTAssertThrowsError(try ThemeParser.parse(text, file: "themes/x.theme")) { error in
            XCTAssertEqual("\(error)", "themes/x.theme:7: expected key = value")
            XCTAssertEqual(error as? ThemeError, ThemeError(file: "themes/x.theme", line: 7, message: "expected key = value"))
        }
        XCTAssertThrowsError(try ThemeParser.parse("= red", file: "t.theme")) { error in
            XCTAssertEqual("\(error)", "t.theme:1: expected key = value")
        }
        XCTAssertThrowsError(try ThemeParser.parse("title_fg =", file: "t.theme")) { error in
            XCTAssertEqual("\(error)", "t.theme:1: title_fg: missing value")
        }
    }

    func testBadColourIsAnErrorNamingKeyAndValue() {
        XCTAssertThrowsError(try ThemeParser.parse("\ntitle_bg = purple\n", file: "themes/x.theme")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("themes/x.theme:2: title_bg: bad colour 'purple'"), text)
        }
        for bad in ["256", "-1", "#fff", "#gggggg", "#12345678", "bright_", "1.5"] {
            XCTAssertThrowsError(try ThemeParser.parse("title_fg = \(bad)", file: "t"), bad)
        }
    }

    func testBadAttributeIsAnError() {
        XCTAssertThrowsError(try ThemeParser.parse("title_attr = bold, blink", file: "t.theme")) { error in
            XCTAssertTrue("\(error)".hasPrefix("t.theme:1: title_attr: unknown attribute 'blink'"), "\(error)")
        }
        XCTAssertThrowsError(try ThemeParser.parse("title_attr = none bold", file: "t.theme"))
    }

    func testUnknownKeysAndRepeatsAreWarningsNotErrors() throws {
        let text = """
        titel_fg = red
        title_fg = green
        title_fg = blue
        colour_scheme = dark
        """
        let result = try ThemeParser.parse(text, file: "themes/x.theme")
        XCTAssertEqual(result.warnings.map(\.description), [
            "themes/x.theme:1: unknown key 'titel_fg' (ignored)",
            "themes/x.theme:3: title_fg set again, replacing line 2",
            "themes/x.theme:4: unknown key 'colour_scheme' (ignored)",
        ])
        XCTAssertEqual(result.theme[.title].fg, .blue)
    }

    func testColourForms() {
        XCTAssertEqual(ThemeColor(themeValue: "default"), .default)
        XCTAssertEqual(ThemeColor(themeValue: "0"), .index(0))
        XCTAssertEqual(ThemeColor(themeValue: "255"), .index(255))
        XCTAssertEqual(ThemeColor(themeValue: "red"), .red)
        XCTAssertEqual(ThemeColor(themeValue: "RED"), .red)
        XCTAssertEqual(ThemeColor(themeValue: "bright_red"), .index(9))
        XCTAssertEqual(ThemeColor(themeValue: "bright_white"), .index(15))
        XCTAssertEqual(ThemeColor(themeValue: "#ff0000"), .index(196))
        XCTAssertEqual(ThemeColor(themeValue: "#FF8700"), .index(208))
        XCTAssertEqual(ThemeColor(themeValue: "#000000"), .index(16))
        XCTAssertEqual(ThemeColor(themeValue: "#ffffff"), .index(231))
        XCTAssertEqual(ThemeColor(themeValue: "#808080"), .index(244))
        XCTAssertEqual(ThemeColor(themeValue: "#87d7ff"), .index(117))
        XCTAssertEqual(ThemeColor(themeValue: "#0a0a0a"), .index(232), "near-black lands on the grey ramp")
        XCTAssertNil(ThemeColor(themeValue: "purple"))
        XCTAssertNil(ThemeColor(themeValue: "٣"), "non-ASCII digits are not numbers here")
    }

    func testAttributeListsAndComments() throws {
        let text = """
          # indented comment
        title_attr = bold, underline
        header_attr = bold underline   # trailing comment
        border_fg = #ff0000 # red, and the # in the value is kept
        dim_attr = none
        selection_attr=reverse
        """
        let theme = try ThemeParser.parse(text, file: "t.theme").theme
        XCTAssertEqual(theme[.title].attributes, [.bold, .underline])
        XCTAssertEqual(theme[.header].attributes, [.bold, .underline])
        XCTAssertEqual(theme[.border].fg, .index(196))
        XCTAssertEqual(theme[.dim].attributes, [])
        XCTAssertEqual(theme[.selection].attributes, [.reverse])
    }

    func testWindowsLineEndingsAndLineNumbers() {
        XCTAssertNoThrow(try ThemeParser.parse("title_fg = red\r\nborder_fg = blue\r\n", file: "t"))
        XCTAssertThrowsError(try ThemeParser.parse("title_fg = red\r\nnonsense\r\n", file: "t")) { error in
            XCTAssertEqual((error as? ThemeError)?.line, 2)
        }
    }

    func testSerializedThemeParsesBackUnchanged() throws {
        for theme in [Theme.standard, Theme.monochrome] {
            let parsed = try ThemeParser.parse(theme.serialized(), file: theme.name + ".theme")
            XCTAssertEqual(parsed.warnings, [])
            XCTAssertEqual(parsed.theme, theme)
        }
    }
}

final class ThemeLoadingTests: XCTestCase {
    var directories: [String] = []

    override func tearDownWithError() throws {
        for directory in directories { try? FileManager.default.removeItem(atPath: directory) }
    }

    private func makeDirectory(_ files: [String: String]) throws -> String {
        let path = NSTemporaryDirectory() + "subdesk-themes-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (name, text) in files {
            try text.write(toFile: path + "/" + name, atomically: true, encoding: .utf8)
        }
        directories.append(path)
        return path
    }

    func testEarlierSearchPathsWin() throws {
        let user = try makeDirectory(["midnight.theme": "title_fg = red\nbogus = 1\n"])
        let shipped = try makeDirectory(["midnight.theme": "title_fg = blue\n", "other.theme": "title_fg = green\n"])
        let result = try Theme.load(name: "midnight", searchPaths: [user, shipped])
        XCTAssertEqual(result.theme[.title].fg, .red)
        XCTAssertEqual(result.path, user + "/midnight.theme")
        XCTAssertEqual(result.warnings.map(\.description), [user + "/midnight.theme:2: unknown key 'bogus' (ignored)"])
        XCTAssertEqual(try Theme.load(name: "other", searchPaths: [user, shipped]).theme[.title].fg, .green)
    }

    func testErrorsNameTheFileFound() throws {
        let directory = try makeDirectory(["broken.theme": "title_fg = red\n\ntitle_bg = nope\n"])
        XCTAssertThrowsError(try Theme.load(name: "broken", searchPaths: [directory])) { error in
            XCTAssertTrue("\(error)".hasPrefix(directory + "/broken.theme:3: title_bg: bad colour 'nope'"), "\(error)")
        }
    }

    func testBuiltInsAnswerWithoutFilesAndUnknownNamesFail() throws {
        let empty = try makeDirectory([:])
        XCTAssertEqual(try Theme.load(name: "default", searchPaths: [empty]).theme, .standard)
        XCTAssertNil(try Theme.load(name: "mono", searchPaths: []).path)
        XCTAssertThrowsError(try Theme.load(name: "sunrise", searchPaths: [empty])) { error in
            XCTAssertEqual("\(error)", "sunrise.theme: not found in \(empty)")
        }
    }

    func testNamesThatArePathsAreRefused() {
        for name in ["../etc/passwd", "a/b", ".hidden", ""] {
            XCTAssertThrowsError(try Theme.load(name: name, searchPaths: ["/tmp"]), name)
        }
    }

    func testNoColorEnvironment() {
        XCTAssertTrue(Theme.prefersMonochrome(environment: ["NO_COLOR": "1"]))
        XCTAssertFalse(Theme.prefersMonochrome(environment: ["NO_COLOR": ""]))
        XCTAssertFalse(Theme.prefersMonochrome(environment: [:]))
    }
}
