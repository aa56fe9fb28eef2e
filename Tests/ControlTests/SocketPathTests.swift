import Testing
import Control

@Suite struct SocketPathTests {
    @Test func precedence() {
        let env = ["STUDIO_SOCKET": "/env/s.sock", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(ControlSocketPath.resolve(flag: "/flag.sock", configured: "/cfg.sock", environment: env, uid: 1000) == "/flag.sock")
        #expect(ControlSocketPath.resolve(flag: nil, configured: "/cfg.sock", environment: env, uid: 1000) == "/env/s.sock")
        #expect(ControlSocketPath.resolve(flag: "", configured: "/cfg.sock", environment: ["XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000) == "/cfg.sock")
        #expect(ControlSocketPath.resolve(flag: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1000/", "STUDIO_SOCKET": ""], uid: 1000)
                == "/run/user/1000/studio/studio.sock")
        #expect(ControlSocketPath.resolve(flag: nil, environment: [:], uid: 0) == "/run/studio/studio.sock")
        #expect(ControlSocketPath.resolve(flag: nil, environment: [:], uid: 1000) == "/tmp/studio-1000/studio.sock")
        #expect(ControlSocketPath.resolve(flag: nil, environment: ["XDG_RUNTIME_DIR": "relative/dir"], uid: 1000) == "/tmp/studio-1000/studio.sock")
    }
}
