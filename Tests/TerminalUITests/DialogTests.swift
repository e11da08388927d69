import XCTest
@testable import TerminalUI

final class DialogTests: XCTestCase {
    let override = Dialog(
        title: "Override",
        body: ["Grant entitlement until a date. The action is audited."],
        fields: [DialogField(label: "Until", value: "2026-12-31"), DialogField(label: "Reason", placeholder: "required")],
        buttons: ["Override", "Cancel"],
        focus: .field(1),
        maximumWidth: 30,
        minimumFieldWidth: 12)

    func testCentredDialogWithWrappedBodyFieldsAndButtons() {
        var frame = Rect.zero
        let buffer = render(width: 40, height: 12) { frame = override.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, [
            "",
            "   ┌ Override ──────────────────────┐",
            "   │ Grant entitlement until a      │",
            "   │ date. The action is audited.   │",
            "   │                                │",
            "   │ Until   2026-12-31             │",
            "   │ Reason                         │",
            "   │                                │",
            "   │    [ Override ]  [ Cancel ]    │",
            "   └────────────────────────────────┘",
        ])
        XCTAssertEqual(frame, Rect(x: 3, y: 1, width: 34, height: 9))
        XCTAssertEqual(roleRuns(buffer, row: 5), "normal×3 dialog_border×1 dialog×9 input×22 dialog×1 dialog_border×1 normal×3")
        XCTAssertEqual(roleRuns(buffer, row: 6), "normal×3 dialog_border×1 dialog×9 selection×22 dialog×1 dialog_border×1 normal×3")
    }

    func testPlaceholderShowsInAnUnfocusedEmptyField() {
        var dialog = override
        dialog.focus = .button(1)
        let buffer = render(width: 40, height: 12) { dialog.render(in: $0.bounds, buffer: &$0) }
        XCTAssertEqual(buffer.lines()[6], "   │ Reason  required               │")
        XCTAssertEqual(buffer[13, 6].role, .dim)
        XCTAssertEqual(roleRuns(buffer, row: 8), "normal×3 dialog_border×1 dialog×18 selection×10 dialog×4 dialog_border×1 normal×3")
    }

    func testShortScreenGivesUpBodyLinesBeforeFieldsAndButtons() {
        let buffer = render(width: 40, height: 8) { override.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, [
            "   ┌ Override ──────────────────────┐",
            "   │ Grant entitlement until a …    │",
            "   │                                │",
            "   │ Until   2026-12-31             │",
            "   │ Reason                         │",
            "   │                                │",
            "   │    [ Override ]  [ Cancel ]    │",
            "   └────────────────────────────────┘",
        ])
    }

    func testLongValueShowsItsEndAndTextIsSanitized() {
        let dialog = Dialog(title: "T\u{1B}", body: ["a\u{202E}b"],
                            fields: [DialogField(label: "Note", value: "0123456789abcdefghij")],
                            buttons: [], maximumWidth: 16, minimumFieldWidth: 4)
        let buffer = render(width: 20, height: 6) { dialog.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, [
            "┌ T\\e ─────────────┐",
            "│ a\\u{202E}b       │",
            "│                  │",
            "│ Note  bcdefghij  │",
            "└──────────────────┘",
        ])
    }

    func testNoteSitsBetweenFieldsAndButtonsInItsRole() {
        var dialog = override
        dialog.note = "reason: required"
        let buffer = render(width: 40, height: 14) { dialog.render(in: $0.bounds, buffer: &$0) }
        assertLines(buffer, [
            "",
            "   ┌ Override ──────────────────────┐",
            "   │ Grant entitlement until a      │",
            "   │ date. The action is audited.   │",
            "   │                                │",
            "   │ Until   2026-12-31             │",
            "   │ Reason                         │",
            "   │                                │",
            "   │ reason: required               │",
            "   │                                │",
            "   │    [ Override ]  [ Cancel ]    │",
            "   └────────────────────────────────┘",
        ])
        XCTAssertEqual(buffer[5, 8].role, .error)
    }
}
