import Foundation
import Testing
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
        #expect(report["sessions"]?.arrayValue?.first?.intValue == session, "newest first: \(report)")
        let sources = report["program_sources"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(sources == ["cam1", "cam2", "cam3"], "\(report)")
        let kinds = report["event_kinds"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(kinds.first == "session_started" && kinds.filter { $0 == "switch" }.count == 3, "\(kinds)")
        #expect(FileManager.default.fileExists(atPath: screenshot))
        #expect(studio.stopServer() == .exited(0))
    }
}
