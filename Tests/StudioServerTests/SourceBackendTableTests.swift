import Foundation
import Testing
import Capture
import StudioConfig
import StudioCore
import StudioServer

/// The backends table against what cannot import it: the config's list of names and the docs.
@Suite struct SourceBackendTableTests {
    @Test func theConfigNamesTheTablesSelectableBackendsAndAllAreOnByDefault() {
        let names = SourceBackends.standard.map(\.name)
        #expect(Set(names).count == names.count, "one line per backend: \(names)")
        #expect(SourceBackends.standard.filter(\.isSelectable).map(\.name) == BackendName.selectable)
        #expect(CameraSettings().backends == Set(BackendName.selectable))
    }

    @Test func enabledBackendsAreTheConfiguredSelectableOnesAndEveryOther() {
        func enabled(_ configured: Set<BackendName>) -> [BackendName] {
            SourceBackends.enabled(SourceBackends.standard, configured: configured).map(\.name)
        }
        #expect(enabled([]) == [.testPattern, .network, .player])
        #expect(enabled([.pipewire]) == [.testPattern, .network, .player, .pipewire])
        // Discoveries start in this order (first-start names depend on it): as before the table.
        #expect(enabled(Set(BackendName.selectable)) == [.testPattern, .network, .player, .pipewire, .v4l2])
        let more = SourceBackends.enabled(SourceBackends.standard + [SolidColourBackend(colour: .black)], configured: [.v4l2])
        #expect(more.map(\.name) == [.testPattern, .network, .player, "solid", .v4l2])
    }

    @Test func architectureDocumentListsTheTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        #expect(try DocumentTables.firstCells(of: "docs/architecture.md", section: "Source backends") == SourceBackends.standard.map(\.name.rawValue))
        let text = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        for backend in SourceBackends.standard {
            let row = try #require(text.split(separator: "\n").first { $0.hasPrefix("| `\(backend.name.rawValue)` |") })
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.count == 5 && cells[2] == backend.summary, "\(row)")
            let folder = cells.count == 5 ? cells[3].trimmingCharacters(in: CharacterSet(charactersIn: "`")) : ""
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(folder).path, isDirectory: &isDirectory) && isDirectory.boolValue,
                    "\(backend.name)'s folder \(folder)")
        }
    }
}
