import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What other local users can see of a running server: its stream keys (argv) and its files (modes).
/// See docs/security.md.
@Suite(.serialized) struct SecurityTests {
    static let small = ["--program", "640x360@30", "--preset", "ultrafast", "--bitrate", "1000k", "--camera-size", "320x180"]

    /// /proc/PID/cmdline: what `ps` shows every local user.
    static func commandLine(_ pid: pid_t) -> String {
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
        return String(decoding: bytes.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : nil
    }

    @Test func aStreamKeyOnTheCommandLineIsHiddenFromPsAndWarnedAbout() throws {
        let studio = try StudioHarness()
        // Nothing listens there: the output keeps reconnecting, which is all this needs.
        let child = try studio.serve(["--cameras", "0", "--rtmp", "rtmp://127.0.0.1:9/live/SECRETKEY"])
        let hidden = waitUntil(seconds: 10, every: 0.1) { !Self.commandLine(child.pid).contains("SECRETKEY") }
        let shown = Self.commandLine(child.pid)
        #expect(hidden && !shown.isEmpty, "ps shows \(shown)")
        #expect(shown.contains("rtmp://127.0.0.1:9/live/****"), "ps shows \(shown)")
        let errors = child.errorText()
        #expect(errors.contains("warning") && errors.contains("command line") && errors.contains("rtmp://127.0.0.1:9/live/****"), "\(errors)")
        #expect(!errors.contains("SECRETKEY"))
        #expect(studio.stopServer() == .exited(0))
    }

    @Test func aStreamKeyFromTheEnvironmentIsUsedAndNeverShown() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let studio = try StudioHarness()
        var environment = ProcessInfo.processInfo.environment
        environment["STUDIO_TEST_STREAM_KEY"] = "envkey42"
        let child = try studio.serve(["--cameras", "1", "--rtmp", "rtmp://127.0.0.1:\(nginx.port)/live/${STUDIO_TEST_STREAM_KEY}"] + Self.small,
                                     environment: environment)
        // nginx names its recording after the stream key it was given.
        #expect(waitUntil(seconds: 20, every: 0.1) { nginx.recordings().contains { $0.lastPathComponent.hasPrefix("envkey42-") } },
                "\(nginx.recordings()) \(nginx.log())")
        #expect(!Self.commandLine(child.pid).contains("envkey42"))
        #expect(!child.errorText().contains("warning") && !child.errorText().contains("envkey42"), "\(child.errorText())")
        #expect(studio.stopServer() == .exited(0))

        // Without the variable the server refuses to start, names it, and creates nothing.
        let database = studio.directory.appendingPathComponent("unset/studio.db").path
        let refused = try studio.run(["serve", "--cameras", "0", "--db", database, "--socket", studio.socket,
                                      "--rtmp", "rtmp://127.0.0.1/live/${STUDIO_TEST_UNSET_KEY}"])
        #expect(refused.status == 2 && refused.error.contains("STUDIO_TEST_UNSET_KEY"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: studio.directory.appendingPathComponent("unset").path))
    }

    /// The name of this process's primary group (a socket group the server may use).
    static var primaryGroup: String {
        guard let entry = getgrgid(getgid()) else { return "root" }
        return String(cString: entry.pointee.gr_name)
    }

    /// Started with umask 000, the server still keeps its database, recordings and the directories
    /// it creates to itself (0600/0700), or shares them read-only with the socket group (0640/0750).
    @Test(arguments: [false, true])
    func filesAreTheOwnersAloneWhateverTheUmask(sharedWithGroup: Bool) throws {
        let (fileMode, directoryMode): (mode_t, mode_t) = sharedWithGroup ? (0o640, 0o750) : (0o600, 0o700)
        let group = sharedWithGroup ? ["--socket-group", Self.primaryGroup] : []
        let studio = try StudioHarness()
        let dataDirectory = studio.directory.appendingPathComponent("data/studio").path
        let database = dataDirectory + "/studio.db"
        let recordParent = studio.directory.appendingPathComponent("recordings").path
        let recordDirectory = recordParent + "/shows"
        let child = try ChildProcess(executable: "/bin/sh", arguments: [
            "-c", "umask 000; exec \"$0\" \"$@\"", StudioHarness.binary, "serve", "--db", database, "--socket", studio.socket,
            "--cameras", "1", "--record", recordDirectory,
        ] + group + Self.small, outputDirectory: studio.directory.appendingPathComponent("serve-umask"))
        defer { if !child.hasExited { _ = child.stop(grace: 5) } }
        let ready = waitUntil(seconds: 15, every: 0.1) { (try? studio.status()) != nil || child.hasExited }
        try #require(ready && !child.hasExited, "server did not come up: \(child.errorText())")
        #expect(studio.waitForProgramFrames(15))
        let recordings = { (try? FileManager.default.contentsOfDirectory(atPath: recordDirectory)) ?? [] }
        #expect(waitUntil(seconds: 10, every: 0.1) { recordings().filter { $0.hasSuffix(".mkv") }.count == 2 }, "\(recordings())")

        // While it runs: the WAL and shared-memory files exist beside the database.
        let databaseFiles = [database, database + "-wal", database + "-shm"]
        for path in databaseFiles { #expect(Self.mode(path) == fileMode, "\(path): \(Self.mode(path).map { String($0, radix: 8) } ?? "missing")") }
        for path in [studio.directory.appendingPathComponent("data").path, dataDirectory, recordParent, recordDirectory] {
            #expect(Self.mode(path) == directoryMode, "\(path): \(Self.mode(path).map { String($0, radix: 8) } ?? "missing")")
        }
        for name in recordings() {
            let path = recordDirectory + "/" + name
            #expect(Self.mode(path) == fileMode, "\(path): \(Self.mode(path).map { String($0, radix: 8) } ?? "missing")")
        }
        child.terminate(signal: SIGINT)
        #expect(child.wait(timeout: 20) == .exited(0))
    }

    static var refusedSettings: [[String]] {
        [["--socket-group", "studio-no-such-group"], ["--record", "/proc/version"]]
            + (EncoderFallbackTests.machineHasVAAPI ? [] : [["--encoder", "vaapi"]])
    }

    /// Settings that cannot work are found before anything is created: no database, no directory.
    @Test(arguments: refusedSettings)
    func aRefusedStartLeavesNothingBehind(_ settings: [String]) throws {
        let studio = try StudioHarness()
        let stateDirectory = studio.directory.appendingPathComponent("state")
        let result = try studio.run(["serve", "--cameras", "0", "--db", stateDirectory.appendingPathComponent("studio.db").path,
                                     "--socket", studio.socket] + settings)
        #expect(result.status == 2, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: stateDirectory.path), "\(settings) created \(stateDirectory.path)")
        #expect(!FileManager.default.fileExists(atPath: studio.socket))
    }
}
