import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized) struct ChildProcessTests {
    @Test func capturesOutputAndExitStatus() throws {
        let child = try ChildProcess(executable: "sh", arguments: ["-c", "echo out; echo err >&2; exit 3"])
        #expect(child.wait(timeout: 10) == .exited(3))
        #expect(child.outputText() == "out\n")
        #expect(child.errorText() == "err\n")
    }

    @Test func terminatesByPidAndReaps() throws {
        let child = try ChildProcess(executable: "sleep", arguments: ["30"])
        #expect(child.wait(timeout: 0.1) == nil)
        child.terminate(signal: SIGTERM)
        #expect(child.wait(timeout: 5) == .signalled(SIGTERM))
        #expect(kill(child.pid, 0) == -1, "reaped: the pid is gone")
    }

    @Test func environmentIsPassed() throws {
        let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo $STUDIO_TEST_VALUE"],
                                     environment: ["STUDIO_TEST_VALUE": "forty-two", "PATH": "/usr/bin:/bin"])
        #expect(child.wait(timeout: 10) == .exited(0))
        #expect(child.outputText() == "forty-two\n")
    }

    @Test func nginxRestartsOnTheSamePort() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        let port = nginx.port
        let firstPid = try #require(nginx.pid)
        try nginx.restart()
        #expect(nginx.port == port && NginxRTMP.accepts(port: port))
        #expect(nginx.pid != firstPid)
        nginx.stop()
        #expect(!nginx.isRunning)
        #expect(!NginxRTMP.accepts(port: port))
        #expect(kill(firstPid, 0) == -1)
        #expect(nginx.url(stream: "abc") == "rtmp://127.0.0.1:\(port)/live/abc")
    }
}
