import Foundation
import Testing
import Capture
import Control
import TestSupport

/// The console's History panel in a real browser (Browser/console_test.py --history, as
/// BrowserConsoleTests): the sessions listed, and for the one chosen its timeline picture (the server's
/// SVG, inline) beside its events, against a demo server that made some switches.
@Suite struct BrowserHistoryTests {
    @Test(.enabled(if: BrowserConsoleTests.browserAvailable,
                   "needs chromium, chromium-driver and python3-selenium (Debian packages; run scripts/setup.sh)"))
    func theHistoryPanelShowsATimelineAndItsEvents() throws {
        let studio = try StudioHarness()
        // A session before, stopped: its row keeps the program's integrated loudness (the demo tone, a
        // 1 kHz sine at -20 dBFS in both channels: -20 LUFS by BS.1770's calibration).
        _ = try HTTPAPIEndToEndTests.serve(studio)
        #expect(waitUntil(seconds: 20, every: 0.1) { (try? studio.json(["audio"]))?["program"]?["integrated_lufs"]?.doubleValue != nil },
                "the mixer gave no integrated loudness")
        let stopped = try #require(try studio.status()["session"]?.intValue)
        #expect(studio.stopServer() == .exited(0))
        let port = try HTTPAPIEndToEndTests.serve(studio)
        #expect(studio.waitForProgramFrames(3))
        for camera in ["cam2", "cam3"] {
            #expect(try studio.run(["switch", camera, "--socket", studio.socket]).status == 0)
            #expect(studio.waitForProgramFrames(10))
        }
        let session = try #require(try studio.status()["session"]?.intValue)
        let screenshot = studio.directory.appendingPathComponent("history.png").path
        let browser = try ChildProcess(executable: BrowserConsoleTests.python,
                                       arguments: [BrowserConsoleTests.script, "--history", String(session), "http://127.0.0.1:\(port)/", screenshot])
        let report = try BrowserConsoleTests.report(of: browser)
        #expect(report["sessions"]?.arrayValue?.compactMap(\.intValue).prefix(2) == [session, stopped], "newest first: \(report)")
        // The stopped session shows its loudness; the running one has none yet.
        let loudness = report["session_loudness"]?.objectValue ?? [:]
        let kept = try #require(loudness[String(stopped)]?.doubleValue, "no loudness on session \(stopped): \(report)")
        if case .tone(_, let level) = TestToneSource.Signal.standard {
            #expect(abs(kept - level) < 0.5, "session \(stopped) shows \(kept) LUFS for a sine at \(level) dBFS")
        }
        #expect(loudness[String(session)] == .null, "the running session shows a loudness: \(report)")
        let sources = report["program_sources"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(sources == ["cam1", "cam2", "cam3"], "\(report)")
        let kinds = report["event_kinds"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(kinds.first == "session_started" && kinds.filter { $0 == "switch" }.count == 3, "\(kinds)")
        #expect(FileManager.default.fileExists(atPath: screenshot))
        #expect(studio.stopServer() == .exited(0))
    }
}
