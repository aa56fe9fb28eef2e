import Foundation
import Testing

/// Reads the tables of a document in docs/ that a test checks against the declarations.
enum DocumentTables {
    /// The code in the first cell of each table row (`| `name` | ... |`) of section `## SECTION` of `path`
    /// (from the package root), in order.
    static func firstCells(of path: String, section: String) throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        let start = try #require(text.range(of: "\n## \(section)\n"), "\(path) has a \(section) section")
        var cells: [String] = []
        for line in text[start.upperBound...].split(separator: "\n") {
            if line.hasPrefix("## ") { break }
            guard line.hasPrefix("| `") else { continue }
            let cell = line.dropFirst(3)
            guard let end = cell.firstIndex(of: "`") else { continue }
            cells.append(String(cell[..<end]))
        }
        return cells
    }

    /// The text of column `column` (0 is the first) of each row of the first table in section `## SECTION`
    /// of `path`, without backticks, in order (the header and its rule left out).
    static func cells(of path: String, section: String, column: Int) throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        let start = try #require(text.range(of: "\n## \(section)\n"), "\(path) has a \(section) section")
        var rows: [[String]] = []
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") || (!rows.isEmpty && !line.hasPrefix("|")) { break }
            guard line.hasPrefix("|") else { continue }
            rows.append(line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "") })
        }
        return rows.dropFirst(2).compactMap { column < $0.count ? $0[column] : nil }
    }
}
