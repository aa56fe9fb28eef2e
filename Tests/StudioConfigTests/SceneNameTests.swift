import Foundation
import Testing
import StudioCore
@testable import StudioConfig

/// Issue 34, item 2: cameras and scenes share one namespace. A scene named as a camera is or could be
/// named is an error at its line; a scene that shows itself (directly or through others) names the cycle;
/// a scene showing a camera that is not there loads, and the server warns about it.
@Suite struct SceneNameTests {
    static let cases: [BadConfig] = [
        // `camN` is what a camera without a pin is named, now or when it appears.
        BadConfig(yaml: "scenes:\n  - {name: cam1, layout: full, sources: [cam2]}\n", line: 2, keyPath: "scenes[0].name",
                  fragment: "\"cam1\" is a camera's name (cameras without a pin are named cam1, cam2...)"),
        BadConfig(yaml: "scenes:\n  - name: wide\n    layout: full\n    sources: [cam1]\n  - name: cam12\n    layout: full\n    sources: [cam1]\n",
                  line: 5, keyPath: "scenes[1].name", fragment: "\"cam12\" is a camera's name"),
        // A pin's name, and the names its further devices get.
        BadConfig(yaml: "cameras:\n  pins:\n    - {match: C920, name: wide}\nscenes:\n  - {name: wide, layout: full, sources: [cam1]}\n",
                  line: 5, keyPath: "scenes[0].name", fragment: "\"wide\" is a camera's name (cameras.pins)"),
        BadConfig(yaml: "cameras:\n  pins:\n    - {match: C920, name: wide}\nscenes:\n  - {name: wide-2, layout: full, sources: [cam1]}\n",
                  line: 5, keyPath: "scenes[0].name", fragment: "the name the pin \"wide\" gives a second device"),
        // Cycles, named.
        BadConfig(yaml: "scenes:\n  - {name: a, layout: full, sources: [a]}\n", line: 2, keyPath: "scenes[0]",
                  fragment: "scene a -> a: a scene cannot show itself"),
        BadConfig(yaml: "scenes:\n  - {name: a, layout: pip, sources: [cam1, b]}\n  - {name: b, layout: full, sources: [a]}\n",
                  line: 2, keyPath: "scenes[0]", fragment: "scene a -> b -> a"),
        BadConfig(yaml: "scenes:\n  - {name: x, layout: full, sources: [cam1]}\n  - name: a\n    layers:\n      - {source: b, rect: [0, 0, 1, 1]}\n"
                  + "  - {name: b, layout: full, sources: [c]}\n  - {name: c, layout: full, sources: [a]}\n",
                  line: 3, keyPath: "scenes[1]", fragment: "scene a -> b -> c -> a"),
    ]

    @Test(arguments: cases)
    func aClashOrACycleIsAnErrorAtItsLine(_ bad: BadConfig) {
        do {
            let config = try StudioConfiguration.parse(yaml: bad.yaml, source: "studio.yaml")
            Issue.record("expected an error, got \(config.scenes.map(\.name))")
        } catch {
            #expect(error.line == bad.line && error.keyPath == bad.keyPath, "\(error)")
            #expect(error.message.contains(bad.fragment), "\(error)")
        }
    }

    /// Names a camera never takes by itself are a scene's to use: `camera1`, `cam`, `cam01`, `wide-1`.
    @Test func namesNoCameraTakesAreFine() throws {
        let yaml = "cameras:\n  pins:\n    - {match: C920, name: wide}\nscenes:\n"
            + ["camera1", "cam", "cam01", "wide-1", "wides"].map { "  - {name: \($0), layout: full, sources: [wide]}\n" }.joined()
        #expect(try StudioConfiguration.parse(yaml: yaml, source: "studio.yaml").scenes.count == 5)
    }

    /// A missing camera loads (it may appear later), and the warning says which layer shows the slate; a
    /// scene inside a scene (no cycle) is not composed: its layer shows the slate too, said so.
    @Test func aMissingSourceIsAWarning() throws {
        let config = try StudioConfiguration.parse(yaml: "scenes:\n  - {name: two, layout: side-by-side, sources: [cam1, cam9]}\n"
                                                   + "  - {name: outer, layout: pip, sources: [cam1, two]}\n", source: "studio.yaml")
        #expect(config.sceneWarnings(cameras: [CameraID("cam1"), CameraID("cam2")]) == [
            "scene two shows cam9, which is not connected: its layer shows the slate until a camera named cam9 appears",
            "scene outer shows scene two: a scene's layers show cameras, so that layer shows the slate",
        ])
        #expect(config.sceneWarnings(cameras: [CameraID("cam1"), CameraID("cam9")]).count == 1)
    }
}
