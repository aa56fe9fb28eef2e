import Foundation
import Testing
import StudioConfig
import StudioCore

/// `transition: {kind: stinger, clip: FILE, cut_at_ms: MS}`, at the top and as a player's end_transition.
@Suite struct StingerConfigTests {
    /// A scratch directory holding `media/sting.mov` (the config checks the clip exists; its content is
    /// decoded by the server at start).
    static func withClip<T>(_ body: (String) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-stingcfg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("media"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("x".utf8).write(to: directory.appendingPathComponent("media/sting.mov"))
        return try body(directory.path)
    }

    static func error(_ yaml: String, _ directory: String) -> ConfigError? {
        do { _ = try StudioConfiguration.parse(yaml: yaml, source: "studio.yaml", directory: directory); return nil } catch { return error }
    }

    @Test func aStingerIsReadWithItsClipRelativeToTheConfigAndItsCutPoint() throws {
        try Self.withClip { directory in
            let config = try StudioConfiguration.parse(yaml: """
            transition: {kind: stinger, clip: media/sting.mov, cut_at_ms: 400}
            players:
              - {name: intro, items: [intro.mov], end: cut-back, end_transition: {kind: stinger, clip: media/sting.mov, cut_at_ms: 250}}
            """, source: "studio.yaml", directory: directory)
            let clip = directory + "/media/sting.mov"
            #expect(config.transition == TransitionSpec(kind: .stinger, clip: clip, cutAtMilliseconds: 400), "\(config.transition)")
            #expect(config.players[0].endTransition == TransitionSpec(kind: .stinger, clip: clip, cutAtMilliseconds: 250))
            #expect(config.transitions.filter { $0.kind == .stinger }.count == 2)
            // In the session's snapshot: the clip and its cut, no length (it is the clip's).
            let snapshot = config.jsonSnapshot()
            #expect(snapshot.contains(#""cut_at_ms":400"#) && snapshot.contains(#""kind":"stinger""#), "\(snapshot)")
        }
    }

    @Test func aStingerWithoutItsClipOrCutOrWithALengthAndClipOnAnotherKindAreRefusedAtTheirKey() throws {
        try Self.withClip { directory in
            let cases: [(yaml: String, key: String, words: String)] = [
                ("transition: {kind: stinger, cut_at_ms: 400}\n", "transition.clip", "missing: the stinger's clip"),
                ("transition: {kind: stinger, clip: media/sting.mov}\n", "transition.cut_at_ms", "missing: where the stinger cuts"),
                ("transition: {kind: stinger, clip: media/nosuch.mov, cut_at_ms: 400}\n", "transition.clip", "stinger clip 'media/nosuch.mov' not found"),
                ("transition: {kind: stinger, clip: media/sting.mov, cut_at_ms: 400, frames: 20}\n", "transition.frames", "a stinger lasts its clip's length"),
                ("transition: {kind: stinger, clip: media/sting.mov, cut_at_ms: -5}\n", "transition.cut_at_ms", "from 0 to 9999"),
                ("transition: {kind: stinger, clip: media/sting.mov, cut_at_ms: 12000}\n", "transition.cut_at_ms", "from 0 to 9999"),
                ("transition: {kind: mix, clip: media/sting.mov}\n", "transition.clip", "clip is for a stinger"),
                ("transition: {kind: wipe-left, frames: 10, cut_at_ms: 100}\n", "transition.cut_at_ms", "cut_at_ms is for a stinger"),
                ("players:\n  - {name: intro, items: [a.mov], end_transition: {kind: stinger, clip: media/sting.mov}}\n",
                 "players[0].end_transition.cut_at_ms", "missing: where the stinger cuts"),
            ]
            for bad in cases {
                let error = try #require(Self.error(bad.yaml, directory), "accepted: \(bad.yaml)")
                #expect(error.keyPath == bad.key && error.message.contains(bad.words), "\(bad.yaml): \(error)")
            }
        }
    }
}
