import Foundation
import Testing
import Control
import StudioConfig
import StudioCore
import TestSupport
@testable import StudioServer

/// The talent's tally page in a real browser (Debian's chromium, headless, driven by Selenium through
/// Browser/tally_test.py) against a real server with a token: opened with `?token=` only, it is dark
/// while its camera is off and turns red within a second of a `switch` to it.
@Suite struct BrowserTallyTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Browser/tally_test.py").path

    @Test(.enabled(if: BrowserConsoleTests.browserAvailable,
                   "needs chromium, chromium-driver and python3-selenium (Debian packages; run scripts/setup.sh)"))
    func thePageTurnsRedWhenItsCameraGoesOnProgram() throws {
        let scratch = try ScratchStudio("tally-browser")
        defer { scratch.remove() }
        let token = "tally-browser-token-0123456789"
        let options = scratch.options(httpToken: token, cameras: 2)
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let port = try #require(server.http?.port)
        let client = try ControlClient(socketPath: options.socketPath)

        let ready = scratch.directory.appendingPathComponent("browser-ready").path
        let browser = try ChildProcess(executable: BrowserConsoleTests.python,
                                       arguments: [Self.script, "http://127.0.0.1:\(port)/tally/cam2?token=\(token)", ready])
        #expect(waitUntil(seconds: 90, every: 0.1) { FileManager.default.fileExists(atPath: ready) || browser.hasExited },
                "the page never came up live and dark")
        let switchedMS = Int(Date().timeIntervalSince1970 * 1000)
        _ = try client.request("switch", arguments: ["source": .string("cam2")])
        let report = try BrowserConsoleTests.report(of: browser)
        #expect(report["before"]?["tally"] == "none" && report["before"]?["background"] == "rgb(17, 17, 17)", "\(report)")
        let redMS = try #require(report["red_at_ms"]?.intValue, "\(report)")
        #expect(redMS - switchedMS <= 1000, "the page turned red \(redMS - switchedMS) ms after the switch was asked")
        #expect(report["after"]?["background"] == "rgb(221, 0, 0)" && report["after"]?["name"] == "cam2" && report["after"]?["state"] == "ON AIR",
                "\(report)")
        let clock = report["after"]?["clock"]?.stringValue ?? "", program = report["after"]?["program"]?.stringValue ?? ""
        #expect(clock.count == 8 && program.hasPrefix("00:00:"), "clock \(clock), program time \(program)")
    }
}
