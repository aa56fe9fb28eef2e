import Foundation
import Testing
import Control
import TestSupport

/// A player in the console, in a real browser (Browser/console_test.py --player, as BrowserConsoleTests):
/// its row under the tiles (item, state, time left) and the countdown on its tile, which runs down once
/// the row's play is clicked.
@Suite struct BrowserPlayerTests {
    @Test(.enabled(if: BrowserConsoleTests.browserAvailable,
                   "needs chromium, chromium-driver and python3-selenium (Debian packages; run scripts/setup.sh)"))
    func aPlayersRowAndItsTilesCountdown() throws {
        let studio = try StudioHarness()
        try NumberedClips.make(studio.directory.appendingPathComponent("count.mp4").path, frames: 300)
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try "players:\n  - {name: count, items: [count.mp4]}\n".write(to: config, atomically: true, encoding: .utf8)
        let port = try NginxRTMP.freePort()
        try studio.serve(["--config", config.path, "--cameras", "1", "--http", "127.0.0.1:\(port)"] + EndToEndTests.smallProgram)
        let screenshot = studio.directory.appendingPathComponent("player.png").path
        let browser = try ChildProcess(executable: BrowserConsoleTests.python,
                                       arguments: [BrowserConsoleTests.script, "--player", "count", "http://127.0.0.1:\(port)/", screenshot])
        let report = try BrowserConsoleTests.report(of: browser)
        let cued = report["cued"]
        #expect(cued?["item"] == "count.mp4 (1/1)" && cued?["state"] == "cued", "\(report)")
        #expect(cued?["remaining"] == "0:10.0" && cued?["countdown"] == "-0:10.0", "\(report)")
        let playing = report["playing"]?.arrayValue?.compactMap(\.stringValue) ?? []
        // The first read as play starts (10 s or just under), the second a second less (the script waits for that).
        #expect(playing.count == 2 && (playing[0] == "-0:10.0" || playing[0].hasPrefix("-0:09")) && playing[1].hasPrefix("-0:0"), "\(report)")
        #expect(FileManager.default.fileExists(atPath: screenshot))
        #expect(studio.stopServer() == .exited(0))
    }
}
