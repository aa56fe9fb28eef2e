import Foundation
import Testing

/// The README is a front page that sends its reader into docs/: every relative link there and in
/// docs/*.md must lead to a file (or directory) of this repository, and a `#anchor` to a heading of that
/// page; every script the README tells its reader to run must exist and be executable.
@Suite struct DocumentLinksTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var documents: [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    @Test func everyDocumentIsFound() {
        #expect(Self.documents.count > 10, "README.md and docs/*.md from \(Self.root.path)")
    }

    @Test(arguments: documents)
    func relativeLinksResolve(_ document: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
        let directory = Self.root.appendingPathComponent(document).deletingLastPathComponent()
        for link in Markdown.links(in: text) where !link.contains("://") && !link.hasPrefix("mailto:") {
            let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let target = parts[0].isEmpty ? Self.root.appendingPathComponent(document) : directory.appendingPathComponent(parts[0])
            guard FileManager.default.fileExists(atPath: target.standardizedFileURL.path) else {
                Issue.record("\(document): the link \(link) leads to no file")
                continue
            }
            guard parts.count == 2, target.pathExtension == "md" else { continue }
            let page = try String(contentsOf: target, encoding: .utf8)
            #expect(Markdown.anchors(of: page).contains(parts[1]), "\(document): the link \(link) names no heading of \(target.lastPathComponent)")
        }
    }

    /// The two commands (and the package's) are scripts of this repository.
    @Test func readmeScriptsExist() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let scripts = text.split(separator: "\n").filter { $0.hasPrefix("    scripts/") }
            .map { String($0.dropFirst(4).prefix { $0 != " " }) }
        #expect(Set(scripts).isSuperset(of: ["scripts/demo.sh", "scripts/test.sh", "scripts/package.sh"]), "README: \(scripts)")
        for script in scripts {
            #expect(FileManager.default.isExecutableFile(atPath: Self.root.appendingPathComponent(script).path), "\(script) is executable")
        }
    }
}

/// What these tests read of Markdown: inline links outside code, and headings' GitHub anchors.
enum Markdown {
    /// The targets of `[text](target)` and `![alt](target)`, outside fenced code blocks and inline code.
    static func links(in text: String) -> [String] {
        var links: [String] = []
        var fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            if fenced || line.hasPrefix("    ") { continue }
            var inCode = false
            var index = line.startIndex
            while index < line.endIndex {
                if line[index] == "`" { inCode.toggle() }
                if !inCode, line[index...].hasPrefix("]("), let close = line[index...].firstIndex(of: ")") {
                    links.append(String(line[line.index(index, offsetBy: 2)..<close]))
                    index = close
                }
                index = line.index(after: index)
            }
        }
        return links
    }

    /// GitHub's anchor of each heading: lowercased, punctuation but `-` and `_` dropped, spaces as `-`;
    /// a repeated heading gets `-1`, `-2`...
    static func anchors(of text: String) -> Set<String> {
        var anchors: Set<String> = []
        var seen: [String: Int] = [:]
        var fenced = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            guard !fenced, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            let slug = String(title.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_" ? character : nil
            })
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }
}
