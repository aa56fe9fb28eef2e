import Foundation
import StudioCore
import Testing
@testable import StudioConfig

/// `overlays:`, and image and text layers: paths relative to the config file, a text's `style:`, and
/// files that are not there reported at their line.
@Suite struct OverlayConfigTests {
    /// A directory with `studio.yaml` (the given text) and an empty `logo.png` beside it (the config
    /// only checks that files exist; decoding them is the server's).
    private static func files(_ yaml: String) throws -> (directory: URL, config: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("overlay-config-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data([0x89, 0x50]).write(to: directory.appendingPathComponent("logo.png"))
        let config = directory.appendingPathComponent("studio.yaml").path
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: config))
        return (directory, config)
    }

    static let example = """
    scenes:
      - name: title
        layers:
          - source: cam1
            rect: [0, 0, 1, 1]
          - text: "Live from the studio"
            rect: [0.1, 0.4, 0.8, 0.2]
            style: { size: 64, align: center }
    overlays:
      - name: logo
        on: true
        layers:
          - image: logo.png
            rect: [1100, 40, 140, 80]
            opacity: 0.9
      - name: lower-third
        layers:
          - text: "Jane Doe"
            rect: [0.05, 0.78, 0.5, 0.12]
            style:
              font: /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
              size: 40
              color: white
              box: "#1040a0"
              box_opacity: 0.8
              padding: 16
              align: left

    """

    @Test func overlaysWithImageAndTextLayersParse() throws {
        let (directory, path) = try Self.files(Self.example)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try StudioConfiguration.load(path: path)
        #expect(config.overlays.map(\.name) == ["logo", "lower-third"])
        #expect(config.overlays.map(\.on) == [true, false])
        let logo = try #require(config.overlays.first?.layers.first)
        #expect(logo.source == .image(directory.appendingPathComponent("logo.png").path), "relative to the config file's directory")
        #expect(logo.rect == .pixels(x: 1100, y: 40, width: 140, height: 80) && logo.opacity == 0.9 && logo.fit == .fit)
        let caption = try #require(config.overlays.last?.layers.first)
        let style = TextStyle(font: TextStyle.boldFont, size: 40, color: .white, box: RGBColor(parsing: "#1040a0"), boxOpacity: 0.8,
                              padding: 16, alignment: .left)
        #expect(caption.source == .text("Jane Doe", style))
        #expect(config.scenes.first?.layers.last?.source == .text("Live from the studio", TextStyle(size: 64, alignment: .center)))

        // The snapshot writes them back, and they read the same.
        let snapshot = try #require(try JSONSerialization.jsonObject(with: Data(config.jsonSnapshot().utf8)) as? [String: Any])
        let overlays = try #require(snapshot["overlays"] as? [[String: Any]])
        #expect(overlays.map { $0["name"] as? String } == ["logo", "lower-third"])
        #expect((overlays.first?["layers"] as? [[String: Any]])?.first?["image"] as? String == logo.source.imagePath)
    }

    @Test func missingFilesAndMixedSourcesPointAtTheirLine() throws {
        let cases: [(yaml: String, line: Int, keyPath: String, message: String)] = [
            ("overlays:\n  - name: logo\n    layers:\n      - image: missing.png\n        rect: [0, 0, 100, 50]\n",
             4, "overlays[0].layers[0].image", "image 'missing.png' not found (no file "),
            ("overlays:\n  - name: caption\n    layers:\n      - text: Jane\n        rect: [0, 0, 100, 50]\n        style:\n          font: /no/such.ttf\n",
             7, "overlays[0].layers[0].style.font", "font '/no/such.ttf' not found"),
            ("overlays:\n  - name: x\n    layers:\n      - image: logo.png\n        color: red\n        rect: [0, 0, 1, 1]\n",
             4, "overlays[0].layers[0].image", "give one of source, color, image and text, not color and image"),
            ("overlays:\n  - name: x\n    layers:\n      - color: red\n        style: { size: 20 }\n        rect: [0, 0, 1, 1]\n",
             5, "overlays[0].layers[0].style", "style is for text layers"),
            ("overlays:\n  - name: x\n    layers:\n      - text: Hi\n        rect: [0, 0, 1, 1]\n        style: { size: 2 }\n",
             6, "overlays[0].layers[0].style.size", "text size must be between 4 and 1024 pixels, got 2"),
            ("overlays:\n  - name: x\n    layers: []\n", 3, "overlays[0].layers", "missing: the overlay's layers"),
            ("overlays:\n  - name: x\n    layers:\n      - color: red\n        rect: [0, 0, 1, 1]\n  - name: x\n    layers:\n      - color: red\n        rect: [0, 0, 1, 1]\n",
             6, "overlays[1].name", "the overlay name \"x\" is already given on line 2"),
            ("overlays:\n  - name: x\n    layers:\n      - color: red\n        rect: [1200, 600, 200, 200]\n",
             2, "overlays[0]", "the rectangle 200x200+1200+600 reaches outside the 1280x720 program"),
        ]
        for (yaml, line, keyPath, message) in cases {
            let (directory, path) = try Self.files(yaml)
            defer { try? FileManager.default.removeItem(at: directory) }
            do {
                _ = try StudioConfiguration.load(path: path)
                Issue.record("accepted: \(yaml)")
            } catch {
                #expect(error.source == path && error.line == line && error.keyPath == keyPath, "\(error)")
                #expect(error.message.hasPrefix(message), "\(error.message)")
                #expect(error.description.contains("\(path):\(line)"), "\(error.description)")
            }
        }
    }
}

private extension LayerSource {
    var imagePath: String? {
        if case .image(let path) = self { return path }
        return nil
    }
}
