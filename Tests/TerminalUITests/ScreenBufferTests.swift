import XCTest
@testable import TerminalUI

final class ScreenBufferTests: XCTestCase {
    func testPutClipsAtTheRightEdgeAndReportsColumnsWritten() {
        var buffer = ScreenBuffer(width: 5, height: 2)
        XCTAssertEqual(buffer.put("abcdefg", x: 2, y: 0), 3)
        XCTAssertEqual(buffer.put("abcdef", x: 0, y: 1, maxWidth: 3), 3)
        assertLines(buffer, ["  abc", "abc"])
    }

    func testPutOutsideTheBufferWritesNothing() {
        var buffer = ScreenBuffer(width: 3, height: 1)
        XCTAssertEqual(buffer.put("x", x: 0, y: 1), 0)
        XCTAssertEqual(buffer.put("x", x: 3, y: 0), 0)
        XCTAssertEqual(buffer.put("x", x: 0, y: -1), 0)
        assertLines(buffer, [""])
    }

    func testWideCharactersTakeTwoCells() {
        var buffer = ScreenBuffer(width: 6, height: 1)
        XCTAssertEqual(buffer.put("漢字", x: 0, y: 0), 4)
        XCTAssertEqual(buffer[0, 0], Cell(text: "漢", width: 2, role: .normal))
        XCTAssertTrue(buffer[1, 0].isContinuation)
        XCTAssertEqual(buffer[2, 0].text, "字")
        XCTAssertEqual(buffer.row(0), "漢字  ")
        XCTAssertEqual(TextWidth.width(of: buffer.row(0)), 6)
    }

    func testWideCharacterCrossingTheEdgeBecomesASpace() {
        var buffer = ScreenBuffer(width: 4, height: 2)
        XCTAssertEqual(buffer.put("a漢字", x: 0, y: 0), 4)
        XCTAssertEqual(buffer.row(0), "a漢 ")
        XCTAssertEqual(buffer.put("🎉🎉🎉", x: 1, y: 1), 3)
        XCTAssertEqual(buffer.row(1), " 🎉 ")
        assertLines(buffer, ["a漢", " 🎉"])
    }

    func testMaxWidthEdgeDoesNotSplitWideCharacters() {
        var buffer = ScreenBuffer(width: 8, height: 1)
        buffer.put("--------", x: 0, y: 0)
        XCTAssertEqual(buffer.put("漢字", x: 1, y: 0, maxWidth: 3), 3)
        assertLines(buffer, ["-漢 ----"])
    }

    func testOverwritingHalfAWideCharacterBlanksTheOtherHalf() {
        var buffer = ScreenBuffer(width: 6, height: 1)
        buffer.put("漢字", x: 0, y: 0)
        buffer.put("x", x: 1, y: 0)
        XCTAssertEqual(buffer.row(0), " x字  ")
        buffer.put("y", x: 2, y: 0)
        XCTAssertEqual(buffer.row(0), " xy   ")
        buffer.put("🎉", x: 3, y: 0)
        buffer.put("漢", x: 4, y: 0)
        XCTAssertEqual(buffer.row(0), " xy 漢")
    }

    func testNegativeStartShowsOnlyTheVisiblePart() {
        var buffer = ScreenBuffer(width: 5, height: 1)
        XCTAssertEqual(buffer.put("漢字", x: -1, y: 0), 3)
        XCTAssertEqual(buffer.row(0), " 字  ")
        XCTAssertEqual(buffer.put("abc", x: -2, y: 0), 1)
        XCTAssertEqual(buffer.row(0), "c字  ")
    }

    func testFittedPutAlignsAndTruncates() {
        var buffer = ScreenBuffer(width: 10, height: 3)
        buffer.put("42", x: 0, y: 0, width: 6, alignment: .right)
        buffer.put("subscribers", x: 0, y: 1, width: 6, alignment: .left)
        buffer.put("ok", x: 0, y: 2, width: 6, alignment: .center, role: .success, padRole: .normal)
        assertLines(buffer, ["    42", "subsc…", "  ok"])
        XCTAssertEqual(roleRuns(buffer, row: 2), "normal×2 success×2 normal×6")
    }

    func testFillAndRestyle() {
        var buffer = ScreenBuffer(width: 6, height: 3)
        buffer.fill(Rect(x: 1, y: 1, width: 3, height: 5), role: .dim, with: ".")
        assertLines(buffer, ["", " ...", " ..."])
        XCTAssertEqual(roleRuns(buffer, row: 1), "normal×1 dim×3 normal×2")
        buffer.put("漢字", x: 0, y: 0)
        buffer.restyle(Rect(x: 1, y: 0, width: 2, height: 1), role: .selection)
        XCTAssertEqual(roleRuns(buffer, row: 0), "selection×4 normal×2", "wide characters cut by the edge restyle whole")
    }

    func testLinesTrimTrailingSpacesOnly() {
        var buffer = ScreenBuffer(width: 8, height: 1)
        buffer.put("a  b", x: 1, y: 0)
        XCTAssertEqual(buffer.lines(), [" a  b"])
        XCTAssertEqual(buffer.row(0), " a  b   ")
    }

    // MARK: - changes(since:)

    func testFirstFrameRepaintsEverythingGroupedByRole() {
        var buffer = ScreenBuffer(width: 6, height: 2)
        buffer.put("ab", x: 2, y: 0, role: .title)
        let runs = buffer.changes(since: nil)
        XCTAssertEqual(runs, [
            CellRun(x: 0, y: 0, text: "  ", width: 2, role: .normal),
            CellRun(x: 2, y: 0, text: "ab", width: 2, role: .title),
            CellRun(x: 4, y: 0, text: "  ", width: 2, role: .normal),
            CellRun(x: 0, y: 1, text: "      ", width: 6, role: .normal),
        ])
    }

    func testResizeRepaintsEverything() {
        let old = ScreenBuffer(width: 4, height: 1)
        let new = ScreenBuffer(width: 5, height: 1)
        XCTAssertEqual(new.changes(since: old), [CellRun(x: 0, y: 0, text: "     ", width: 5, role: .normal)])
    }

    func testIdenticalFramesHaveNoChanges() {
        let frame = render(width: 10, height: 3) { $0.put("same", x: 1, y: 1, role: .accent) }
        XCTAssertEqual(frame.changes(since: frame), [])
    }

    func testOneTableRowChangingRepaintsOnlyItsChangedCells() {
        let columns = [TableColumn("TYPE", width: .fixed(10)), TableColumn("RESULT", width: .flex(1))]
        func table(_ middle: TableCell) -> TableView {
            TableView(columns: columns, rows: [
                ["DID_RENEW", TableCell("stored", role: .feedStored)],
                ["EXPIRED", middle],
                ["REFUND", "stored"],
            ])
        }
        let before = render(width: 24, height: 5) { table(TableCell("stored", role: .feedStored)).render(in: $0.bounds, buffer: &$0) }
        let after = render(width: 24, height: 5) { table(TableCell("duplicate", role: .feedDuplicate)).render(in: $0.bounds, buffer: &$0) }

        XCTAssertEqual(after.changes(since: before), [
            CellRun(x: 12, y: 2, text: "duplicate", width: 9, role: .feedDuplicate),
        ])
    }

    func testMovingTheSelectionRepaintsTheTwoRowsInvolved() {
        let rows: [[TableCell]] = [["a"], ["b"], ["c"]]
        let columns = [TableColumn("X")]
        let before = render(width: 5, height: 4) { TableView(columns: columns, rows: rows, selectedRow: 0).render(in: $0.bounds, buffer: &$0) }
        let after = render(width: 5, height: 4) { TableView(columns: columns, rows: rows, selectedRow: 1).render(in: $0.bounds, buffer: &$0) }
        XCTAssertEqual(after.changes(since: before), [
            CellRun(x: 0, y: 1, text: "a    ", width: 5, role: .normal),
            CellRun(x: 0, y: 2, text: "b    ", width: 5, role: .selection),
        ])
    }

    func testChangedWideCharacterIsOneRunCoveringBothColumns() {
        let before = render(width: 6, height: 1) { $0.put("a字b", x: 0, y: 0) }
        let after = render(width: 6, height: 1) { $0.put("a漢b", x: 0, y: 0) }
        XCTAssertEqual(after.changes(since: before), [CellRun(x: 1, y: 0, text: "漢", width: 2, role: .normal)])

        let narrow = render(width: 6, height: 1) { $0.put("axyb", x: 0, y: 0) }
        XCTAssertEqual(narrow.changes(since: before), [CellRun(x: 1, y: 0, text: "xy", width: 2, role: .normal)])
        XCTAssertEqual(after.changes(since: narrow), [CellRun(x: 1, y: 0, text: "漢", width: 2, role: .normal)])
    }
}
