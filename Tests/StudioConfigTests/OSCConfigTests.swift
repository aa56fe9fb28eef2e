import Testing
import StudioCore
@testable import StudioConfig

/// `osc:`: what it reads, and errors that name the key.
@Suite struct OSCConfigTests {
    @Test func theListenAddressAndFeedbackAreRead() throws {
        let config = try StudioConfiguration.parse(yaml: """
            osc:
              listen: 0.0.0.0:9000
              feedback: [192.0.2.30:9001, "[::1]:9002"]
            """, source: "t.yaml")
        #expect(config.osc == OSCSettings(listen: ListenAddress(host: "0.0.0.0", port: 9000),
                                          feedback: [ListenAddress(host: "192.0.2.30", port: 9001), ListenAddress(host: "::1", port: 9002)]))
        #expect(config.jsonSnapshot().contains(#""osc":{"feedback":["192.0.2.30:9001","[::1]:9002"],"listen":"0.0.0.0:9000"}"#), "\(config.jsonSnapshot())")
        // Off unless given (and no key in the snapshot); a restart to change.
        #expect(StudioConfiguration().osc.listen == nil && !StudioConfiguration().jsonSnapshot().contains("osc"))
        #expect(StudioConfiguration().changes(to: config).fixed == ["osc"])
    }

    @Test(arguments: [
        ("osc:\n  feedback: [127.0.0.1:9001]\n", "osc.listen", "missing"),
        ("osc:\n  listen: 9000\n", "osc.listen", "127.0.0.1"),
        ("osc:\n  listen: 127.0.0.1:9000\n  feedback: [osc.local:9001]\n", "osc.feedback[0]", "IPv4"),
        ("osc:\n  listen: 127.0.0.1:9000\n  feedback: [127.0.0.1:0]\n", "osc.feedback", "port must not be 0"),
        ("osc:\n  listen: 127.0.0.1:9000\n  feedback: [127.0.0.1:9001, 127.0.0.1:9001]\n", "osc.feedback", "twice"),
        ("osc:\n  listen: 127.0.0.1:9000\n  feedbak: []\n", "osc.feedbak", "feedback"),
        ("osc: 9000\n", "osc", "listen"),
    ])
    func badSettingsAreRefusedAtTheirKey(_ yaml: String, _ keyPath: String, _ words: String) {
        expectRefused(yaml, at: keyPath, saying: words)
    }
}
