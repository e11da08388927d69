import XCTest
@testable import TerminalUI

final class TableViewTests: XCTestCase {
    let columns = [
        TableColumn("TIME", width: .fixed(8)),
        TableColumn("TYPE", width: .flex(1)),
        TableColumn("RESULT", width: .fixed(9), alignment: .right),
    ]

    var feedRows: [[TableCell]] {
        [
            ["09:14:05", "?", TableCell("REJECTED", role: .feedRejected)],
            ["09:14:06", "SUBSCRIBED/INITIAL_BUY", TableCell("duplicate", role: .feedDuplicate)],
            ["09:14:07", "DID_FAIL_TO_RENEW/GRACE_PERIOD", TableCell("stored", role: .feedStored)],
            ["09:14:07", "DID_RENEW", TableCell("stored", role: .feedStored)],
        ]
    }

    func testHeaderRowsAndAlignment() {
        var offset = -1
        let buffer = render(width: 40, height: 5) {
            offset = TableView(columns: columns, rows: feedRows).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, [
            "TIME      TYPE                    RESULT",
            "09:14:05  ?                     REJECTED",
            "09:14:06  SUBSCRIBED/INITIAL…  duplicate",
            "09:14:07  DID_FAIL_TO_RENEW/…     stored",
            "09:14:07  DID_RENEW               stored",
        ])
        XCTAssertEqual(offset, 0)
        XCTAssertEqual(roleRuns(buffer, row: 0), "header×40")
        XCTAssertEqual(roleRuns(buffer, row: 1), "normal×32 feed_rejected×8", "a badge colours only its text")
    }

    func testSelectionIsDrawnAcrossTheRowAndKeptVisible() {
        var offset = -1
        let buffer = render(width: 40, height: 4) {
            offset = TableView(columns: columns, rows: feedRows, selectedRow: 3).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, [
            "TIME      TYPE                    RESULT",
            "09:14:06  SUBSCRIBED/INITIAL…  duplicate",
            "09:14:07  DID_FAIL_TO_RENEW/…     stored",
            "09:14:07  DID_RENEW               stored",
        ])
        XCTAssertEqual(offset, 1)
        XCTAssertEqual(roleRuns(buffer, row: 3), "selection×40", "the badge role gives way to the selection")
        XCTAssertEqual(roleRuns(buffer, row: 2), "normal×34 feed_stored×6")
    }

    func testScrollOffsetMovesAsLittleAsPossible() {
        XCTAssertEqual(TableView.scrollOffset(current: 0, selected: 10, visibleRows: 5, rowCount: 20), 6)
        XCTAssertEqual(TableView.scrollOffset(current: 6, selected: 8, visibleRows: 5, rowCount: 20), 6)
        XCTAssertEqual(TableView.scrollOffset(current: 6, selected: 2, visibleRows: 5, rowCount: 20), 2)
        XCTAssertEqual(TableView.scrollOffset(current: 15, selected: nil, visibleRows: 5, rowCount: 12), 7)
        XCTAssertEqual(TableView.scrollOffset(current: 0, selected: 99, visibleRows: 5, rowCount: 12), 7)
        XCTAssertEqual(TableView.scrollOffset(current: 3, selected: 0, visibleRows: 0, rowCount: 12), 0)
    }

    func testEmptyTableSaysSo() {
        let buffer = render(width: 20, height: 3) {
            TableView(columns: [TableColumn("NAME")], rows: []).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, ["NAME", "      no rows"])
        XCTAssertEqual(buffer[6, 1].role, .dim)
    }

    func testWideCellsKeepColumnsAligned() {
        let buffer = render(width: 9, height: 4) {
            TableView(columns: [TableColumn("A", width: .fixed(4)), TableColumn("B", width: .fixed(3))],
                      rows: [["漢字漢字", "xyz"], ["🎉🎉🎉", "abc"], ["漢字", "12345"]],
                      columnSpacing: 1).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, [
            "A    B",
            "漢…  xyz",
            "🎉…  abc",
            "漢字 12…",
        ])
    }

    func testCellTextIsSanitized() {
        let buffer = render(width: 20, height: 2) {
            TableView(columns: [TableColumn("PRODUCT")], rows: [["app\u{1B}]0;x\u{07}"]]).render(in: $0.bounds, buffer: &$0)
        }
        assertLines(buffer, ["PRODUCT", "app\\e]0;x\\x07"])
    }

    func testNarrowAreaClipsTrailingColumns() {
        let buffer = render(width: 12, height: 2) {
            TableView(columns: columns, rows: [feedRows[0]]).render(in: $0.bounds, buffer: &$0)
        }
        // Fixed columns are served first, so the flexible TYPE column gives way.
        assertLines(buffer, ["TIME", "09:14:05"])
    }
}
