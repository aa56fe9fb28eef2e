import Foundation
import Testing

/// scripts/packages/: the demo installs what the demo needs and nothing of the test stack, and every
/// package is written once, in one of the two lists (scripts/setup.sh reads them).
@Suite struct PackageListsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A list's package names: `#` comments and blank lines dropped, as scripts/setup.sh reads it.
    static func packages(_ name: String) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent("scripts/packages/\(name).txt"), encoding: .utf8)
        return text.split(separator: "\n").flatMap { line in
            (line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "").split(separator: " ").map(String.init)
        }
    }

    @Test func theDemoListHoldsNoneOfTheTestStack() throws {
        let demo = try Self.packages("demo")
        #expect(demo.contains("nginx-light") && demo.contains("libnginx-mod-rtmp") && demo.contains("libavcodec-dev"), "\(demo)")
        for word in ["qemu", "linux-image", "dkms", "chromium", "gstreamer", "selenium", "wireplumber"] {
            #expect(!demo.contains { $0.contains(word) }, "the demo's list holds \(word): \(demo)")
        }
    }

    @Test func everyPackageIsWrittenOnce() throws {
        let all = try Self.packages("demo") + Self.packages("test")
        let repeated = Dictionary(grouping: all, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        #expect(repeated.isEmpty, "written more than once: \(repeated)")
        #expect(all.allSatisfy { $0.allSatisfy { $0.isLowercase || $0.isNumber || "+-.".contains($0) } }, "\(all)")
    }
}
