import Foundation
import StudioCore
import StudioViews
import EventStore
import Control
import StudioCLI

/// `studio log`, printed as it comes: without a server as SQLite reads the events, through a server page by
/// page (`after_id`, `next_after_id`), so a session of millions of events takes the memory of one row (or one
/// page) and one output buffer, not of the whole log (docs/benchmarks.md), in the client and in the server.
/// The same text and JSON as the server's reply: JSON `{"session": ..., "events": [...]}` written element
/// by element; the table's columns as wide as the widest cell so far (a later, wider cell pushes the
/// columns after it along from its row on: the rows are not held to measure them first).
///
/// `@unchecked Sendable`: the printer is used by one thread at a time — the caller's until the query
/// starts, the store thread while it steps (the caller waits on it), the caller's again after.
final class LogStream: @unchecked Sendable {
    private let json: Bool
    private var buffer = ""
    private var widths: [Int] = []
    private var everySession = false
    private var events = 0
    /// stdout was closed by its reader (`studio log | head`): stop writing, quietly.
    private var readerGone = false

    init(json: Bool) {
        self.json = json
        buffer.reserveCapacity(Self.flushBytes + 4096)
    }

    /// Prints `arguments`' log from `store`; the same checks and errors as the server's `log`.
    static func print(_ arguments: LogArguments, store: EventStore, json: Bool) throws {
        let stream = LogStream(json: json)
        try History.streamLog(arguments, store: store, defaultSession: nil, session: stream.begin, event: stream.add)
        stream.end()
    }

    /// Prints `arguments`' log as the server at `client` answers it, a page at a time until `next_after_id` is null.
    static func print(_ arguments: LogArguments, client: ControlClient, json: Bool) throws {
        let stream = LogStream(json: json)
        var request = arguments
        var first = true
        while true {
            let page = try client.call(HistorySignatures.Log.self, request).value
            if first {
                try stream.begin(page.session)
                // The same session on every page, even if another one starts meanwhile.
                request.session = page.session?.id ?? request.session
                first = false
            }
            for event in page.events { try stream.add(event) }
            guard let next = page.nextAfterID else { break }
            // The server must move on: a page that does not would repeat itself forever.
            guard next > (request.afterID ?? 0) else { throw ClientFailure("the server's next page of the log starts at event \(next), not after \(request.afterID ?? 0)") }
            request.afterID = next
        }
        stream.end()
    }

    func begin(_ session: SessionView?) throws {
        everySession = session == nil
        if json {
            var text = "{\"session\":"
            try (session.map { try JSONValue(encoding: $0) } ?? .null).write(to: &text)
            append(text + ",\"events\":[")
            return
        }
        let columns = (everySession ? ["SESSION"] : []) + Format.logColumns
        // As wide as their usual cells from the start (a wall time, a program time, the longest kind
        // this binary knows), so the header lines up with the rows.
        let usual = [Format.time(Date()), Format.programTime(0), EventKind.all.map(\.rawValue).max { $0.count < $1.count } ?? "", "", ""]
        widths = zip(columns, (everySession ? [""] : []) + usual).map { max($0.count, $1.count) }
        if let session { append(Format.logHeader(session) + "\n") }
        // With every session searched and nothing found, the table is replaced by "no events match".
        if !everySession { row(columns) }
    }

    func add(_ event: EventView) throws {
        if json {
            if events > 0 { buffer += "," }
            event.writeJSON(to: &buffer)
            flushIfFull()
        } else {
            if everySession && events == 0 { row(["SESSION"] + Format.logColumns) }
            row((everySession ? [event.session.map(String.init) ?? "-"] : []) + Format.eventRow(event))
        }
        events += 1
    }

    func end() {
        if json { append("]}\n") } else if everySession && events == 0 { append("no events match\n") }
        flush()
    }

    /// The cells padded to the columns' widths so far (a column's width: its widest cell's characters;
    /// the padding counted in UTF-16 units, as `String.padding(toLength:)` did), into the buffer.
    private func row(_ cells: [String]) {
        for (i, cell) in cells.enumerated() {
            buffer += cell
            if i == cells.count - 1 { break }
            widths[i] = max(widths[i], cell.count)
            buffer += String(repeating: " ", count: max(0, widths[i] - cell.utf16.count) + 2)
        }
        buffer += "\n"
        flushIfFull()
    }

    private static let flushBytes = 64 * 1024

    private func append(_ text: String) {
        buffer += text
        flushIfFull()
    }

    private func flushIfFull() {
        if buffer.utf8.count >= Self.flushBytes { flush() }
    }

    private func flush() {
        defer { buffer.removeAll(keepingCapacity: true) }
        guard !readerGone, !buffer.isEmpty else { return }
        readerGone = !writeAll(1, buffer)
    }
}
