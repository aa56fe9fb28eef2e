import Testing
import StudioCore
@testable import StudioConfig

@Suite struct HTTPConfigTests {
    @Test func defaultsToLoopbackWithoutToken() throws {
        let config = try StudioConfiguration.parse(yaml: "", source: "studio.yaml")
        #expect(config.http.enabled && config.http.listen == ListenAddress(host: "127.0.0.1", port: 8080) && config.http.token == nil)
        #expect(config.http.listen.isLoopback)
    }

    @Test func readsTheSectionAndNeverSnapshotsTheToken() throws {
        let config = try StudioConfiguration.parse(yaml: "http:\n  listen: 0.0.0.0:9090\n  token: abcdefghijklmnop0123\n", source: "studio.yaml")
        #expect(config.http.listen == ListenAddress(host: "0.0.0.0", port: 9090) && !config.http.listen.isLoopback)
        #expect(config.http.token == "abcdefghijklmnop0123")
        let snapshot = config.jsonSnapshot()
        #expect(!snapshot.contains("abcdefghijklmnop0123") && snapshot.contains("\"http\":{\"enabled\":true,\"listen\":\"0.0.0.0:9090\",\"token\":\"(set)\"}"),
                "\(snapshot)")
        let off = try StudioConfiguration.parse(yaml: "http:\n  enabled: false\n", source: "studio.yaml")
        #expect(!off.http.enabled)
    }

    @Test(arguments: [
        ("http:\n  listen: 8080\n", "http.listen: expected ADDRESS:PORT like 127.0.0.1:8080"),
        ("http:\n  listen: example.com:80\n", "http.listen: \"example.com\" is not an IPv4 address"),
        ("http:\n  token: short\n", "http.token: the HTTP token must be at least 16"),
        ("http:\n  lisen: 127.0.0.1:80\n", "http.lisen: unknown key (did you mean listen?)"),
    ])
    func refusesBadValuesNamingTheKey(_ yaml: String, _ message: String) {
        do {
            _ = try StudioConfiguration.parse(yaml: yaml, source: "studio.yaml")
            Issue.record("accepted \(yaml)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }
}
