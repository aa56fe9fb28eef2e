import Foundation
import Testing
@testable import StudioConfig

/// What no error a person reads may contain: Swift type names, Foundation error domains, decoder internals.
let notASentence = ["ClientFailure(", "NSCocoaErrorDomain", "Dictionary<", "Optional(", "DecodingError", "Swift.", "Error Domain="]

/// Issue 34, item 3: the config loader's errors, from files on disk, are sentences that name the file and,
/// where there is one, the line.
@Suite struct ConfigSentenceTests {
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("studio-config-sentences-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func loadError(_ path: String) -> ConfigError? {
        do { _ = try StudioConfiguration.load(path: path); return nil } catch { return error }
    }

    @Test func fileProblemsAreSaidInWords() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let loop = dir.appendingPathComponent("loop.yaml").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        let dangling = dir.appendingPathComponent("dangling.yaml").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: dir.appendingPathComponent("nowhere.yaml").path)
        let nul = dir.appendingPathComponent("nul.yaml")
        var text = (1...12).map { "# line \($0)" }.joined(separator: "\n") + "\nvideo: {preset: fa\u{0}st}\n"
        try text.write(to: nul, atomically: true, encoding: .utf8)
        let latin1 = dir.appendingPathComponent("latin1.yaml")
        try Data([0x76, 0x69, 0x64, 0x65, 0x6F, 0x3A, 0x20, 0xE9, 0x0A]).write(to: latin1)
        let large = dir.appendingPathComponent("large.yaml")
        text = String(repeating: "# padding\n", count: StudioConfiguration.maxFileBytes / 10 + 10)
        try text.write(to: large, atomically: true, encoding: .utf8)
        let bell = dir.appendingPathComponent("bell.yaml")
        try "video:\n  preset: fast\naudio:\n  source: to\u{7}ne\n".write(to: bell, atomically: true, encoding: .utf8)

        let expected: [(path: String, line: Int?, fragment: String)] = [
            (loop, nil, "cannot read the config file: a loop of symbolic links"),
            (dangling, nil, "cannot read the config file: no such file"),
            (dir.path, nil, "cannot read the config file: it is a directory"),
            (dir.appendingPathComponent("absent.yaml").path, nil, "cannot read the config file: no such file"),
            (nul.path, 13, "a NUL byte"),
            (latin1.path, nil, "not valid UTF-8"),
            (large.path, nil, "larger than"),
            (bell.path, 4, "(the byte 0x07)"),
        ]
        for (path, line, fragment) in expected {
            let error = try #require(Self.loadError(path), "\(path) loads")
            #expect(error.line == line && error.description.contains(fragment), "\(error)")
            #expect(!notASentence.contains { error.description.contains($0) }, "\(error)")
        }
        // A loop of links is no absent file: `loadIfPresent` reports it too instead of starting on the defaults.
        #expect(throws: ConfigError.self) { try StudioConfiguration.loadIfPresent(path: loop) }
        #expect(try StudioConfiguration.loadIfPresent(path: dir.appendingPathComponent("absent.yaml").path) == StudioConfiguration())
    }

    /// Every broken value the decoder meets (numbers out of range, types where others belong) in words.
    @Test(arguments: [
        "audio:\n  inputs:\n    - {name: mic1, gain: 1e309}\n", "audio:\n  master: {gain: 1e309}\n", "audio:\n  master: {gain: [1]}\n",
        "transition: {kind: mix, frames: 1e309}\n", "transition: {kind: mix, frames: 99999999999999999999}\n",
        "video: {bitrate: 1e309}\n", "program: {fps: 1e309}\n", "cameras: {demo: 1e309}\n", "cameras: {pins: {a: b}}\n",
        "scenes: {name: a}\n", "scenes:\n  - {name: a, layout: pip, sources: [cam1, cam2], size: 1e309}\n",
        "scenes:\n  - name: a\n    layers:\n      - {source: cam1, rect: [0, 0, 1e309, 1]}\n", "scenes:\n  - name: a\n    layers:\n      - {source: cam1, rect: [0, 0, 1e30, 10]}\n",
        "scenes:\n  - name: a\n    layers:\n      - {source: cam1, rect: [0, 0, 1, 1], z: 1e309}\n",
        "scenes:\n  - name: a\n    layers:\n      - {source: cam1, rect: [0, 0, 1, 1], border: {width: 1e30}}\n",
        "http: {listen: [1, 2]}\n", "http: {token: {a: b}}\n", "outputs: [1e309]\n", "record: [a]\n", "socket_group: {a: 1}\n",
        "~: 1\n", "\"\": 1\n", "video:\n  preset: !!binary aGVsbG8=\n", "[\n", "{a: 1, a: 2}\n",
    ])
    func decoderErrorsAreSentences(_ yaml: String) {
        do {
            _ = try StudioConfiguration.parse(yaml: yaml, source: "studio.yaml")
            Issue.record("expected an error for \(yaml)")
        } catch {
            #expect(!notASentence.contains { error.description.contains($0) }, "\(error)")
            #expect(error.description.hasPrefix("studio.yaml"), "\(error)")
        }
    }
}
