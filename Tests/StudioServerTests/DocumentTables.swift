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
}
