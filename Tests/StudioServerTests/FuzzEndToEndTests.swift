import Foundation
import Testing
import Control
import TestSupport

/// Every input surface of a running `studio serve` fuzzed by grammar (issue 34): Fuzz/fuzz_surfaces.py,
/// Hypothesis under /usr/bin/python3, draws control-socket lines, HTTP requests, config files (applied
/// with `reload`) and CLI invocations, a fixed seed and a few hundred examples each, and checks after
/// every one that the server lives, answered in time and said something well formed (the script's
/// docstring has the properties). The long run is scripts/fuzz.sh MINUTES; docs/security.md has what
/// was run.
@Suite struct FuzzEndToEndTests {
    static let python = "/usr/bin/python3"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fuzz/fuzz_surfaces.py").path

    /// Whether Hypothesis is installed (scripts/setup.sh installs Debian's python3-hypothesis).
    static var hypothesisAvailable: Bool {
        guard let probe = try? ChildProcess(executable: python, arguments: ["-c", "import hypothesis"]) else { return false }
        return probe.wait(timeout: 30) == .exited(0)
    }

    @Test(.enabled(if: hypothesisAvailable, "needs python3-hypothesis (a Debian package; run scripts/setup.sh)"))
    func everySurfaceSurvivesItsGrammar() throws {
        let examples = 300
        let fuzzer = try ChildProcess(executable: Self.python, arguments: [
            Self.script, "--binary", StudioHarness.binary, "--seed", "34", "--examples", "\(examples)", "--idle", "10",
        ])
        let exit = fuzzer.wait(timeout: 240)
        if exit == nil { fuzzer.terminate(signal: SIGKILL); _ = fuzzer.wait(timeout: 5) }
        let output = fuzzer.outputText()
        try #require(exit == .exited(0), "the fuzzer: \(String(describing: exit))\n\(output.suffix(3000))\n\(fuzzer.errorText().suffix(3000))")
        let report = try JSONValue(parsing: output.split(whereSeparator: \.isNewline).last.map(String.init) ?? "")
        for surface in ["control", "http", "config", "cli"] {
            #expect(report["examples"]?[surface]?.intValue == examples, "\(surface): \(report)")
        }
        // The lists the grammars draw from came from the server and the docs, not from nowhere.
        #expect((report["commands"]?.intValue ?? 0) >= 25 && (report["routes"]?.intValue ?? 0) >= 30
                && (report["cli_commands"]?.intValue ?? 0) >= 20, "\(report)")
    }

    /// The HTTP surface of servers with `http.token`: right tokens, near misses and none, in the header
    /// and the query; a request without the token must never be answered below 400.
    @Test(.enabled(if: hypothesisAvailable, "needs python3-hypothesis (a Debian package; run scripts/setup.sh)"))
    func theTokenHoldsUnderTheHTTPGrammar() throws {
        let examples = 100
        let fuzzer = try ChildProcess(executable: Self.python, arguments: [
            Self.script, "--binary", StudioHarness.binary, "--seed", "34", "--examples", "\(examples)", "--idle", "2",
            "--surfaces", "http", "--token",
        ])
        let exit = fuzzer.wait(timeout: 180)
        if exit == nil { fuzzer.terminate(signal: SIGKILL); _ = fuzzer.wait(timeout: 5) }
        let output = fuzzer.outputText()
        try #require(exit == .exited(0), "the fuzzer: \(String(describing: exit))\n\(output.suffix(3000))\n\(fuzzer.errorText().suffix(3000))")
        let report = try JSONValue(parsing: output.split(whereSeparator: \.isNewline).last.map(String.init) ?? "")
        #expect(report["examples"]?["http"]?.intValue == examples, "\(report)")
    }

    /// The OSC surface of servers with `osc.listen`: messages to every documented address with names in
    /// them, every type, nested bundles, truncated, corrupted and raw datagrams; the OSC thread answers a
    /// probe after each, with OSC only.
    @Test(.enabled(if: hypothesisAvailable, "needs python3-hypothesis (a Debian package; run scripts/setup.sh)"))
    func oscDatagramsSurviveTheirGrammar() throws {
        let examples = 1000
        let fuzzer = try ChildProcess(executable: Self.python, arguments: [
            Self.script, "--binary", StudioHarness.binary, "--seed", "33", "--examples", "\(examples)", "--idle", "2", "--surfaces", "osc",
        ])
        let exit = fuzzer.wait(timeout: 180)
        if exit == nil { fuzzer.terminate(signal: SIGKILL); _ = fuzzer.wait(timeout: 5) }
        let output = fuzzer.outputText()
        try #require(exit == .exited(0), "the fuzzer: \(String(describing: exit))\n\(output.suffix(3000))\n\(fuzzer.errorText().suffix(3000))")
        let report = try JSONValue(parsing: output.split(whereSeparator: \.isNewline).last.map(String.init) ?? "")
        #expect(report["examples"]?["osc"]?.intValue == examples, "\(report)")
    }
}
