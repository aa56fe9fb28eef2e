import Testing
import StudioCore

@Suite struct ListenAddressTests {
    @Test(arguments: [
        ("127.0.0.1:8080", "127.0.0.1", 8080, true),
        ("localhost:80", "127.0.0.1", 80, true),
        ("127.3.4.5:0", "127.3.4.5", 0, true),
        ("0.0.0.0:8080", "0.0.0.0", 8080, false),
        ("192.168.1.20:8443", "192.168.1.20", 8443, false),
        ("[::1]:8080", "::1", 8080, true),
        ("[0:0:0:0:0:0:0:1]:8080", "0:0:0:0:0:0:0:1", 8080, true),
        ("[::]:8080", "::", 8080, false),
        ("[fd00::2]:8443", "fd00::2", 8443, false),
        ("[2001:db8::10]:80", "2001:db8::10", 80, false),
        ("[::ffff:127.0.0.1]:80", "::ffff:127.0.0.1", 80, false),
        ("[::2]:80", "::2", 80, false),
    ])
    func parsesAndClassifies(_ text: String, _ host: String, _ port: Int, _ loopback: Bool) throws {
        let address = try ListenAddress.parse(text).get()
        #expect(address.host == host && Int(address.port) == port, "\(address)")
        #expect(address.isLoopback == loopback, "\(text): loopback should be \(loopback) (it decides whether a token is needed)")
        #expect(address.isIPv6 == host.contains(":"))
    }

    @Test func writesIPv6InBrackets() throws {
        #expect(try ListenAddress.parse("[::1]:8080").get().description == "[::1]:8080")
        #expect(try ListenAddress.parse("[::]:0").get().authority(port: 4321) == "[::]:4321")
        #expect(try ListenAddress.parse("10.0.0.1:80").get().description == "10.0.0.1:80")
    }

    @Test func ipv6BytesFollowTheTextualForms() {
        #expect(ListenAddress.ipv6Bytes("::1") == [UInt8](repeating: 0, count: 15) + [1])
        #expect(ListenAddress.ipv6Bytes("::") == [UInt8](repeating: 0, count: 16))
        #expect(ListenAddress.ipv6Bytes("2001:db8::ff00:42:8329") == [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0x00, 0, 0x42, 0x83, 0x29])
        #expect(ListenAddress.ipv6Bytes("::ffff:10.1.2.3") == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3])
        for bad in ["1:2:3:4:5:6:7:8:9", "::1::", ":::", "1:2", "12345::", "::g", "1:2:3:4:5:6:7::8", ":1::", "1::2:", "127.0.0.1"] {
            #expect(ListenAddress.ipv6Bytes(bad) == nil, "\(bad) is no IPv6 address")
        }
    }

    @Test(arguments: [
        ("::1:8080", "an IPv6 address goes in brackets before its port: [::1]:8080"),
        ("[::1]", "the port is missing after ]"),
        ("[::1]8080", "the port is missing after ]"),
        ("[::1:8080", "does not close it"),
        ("[::g]:80", "\"::g\" is not an IPv6 address"),
        ("[fe80::1%eth0]:80", "link-local addresses are not supported"),
        ("[::1]:99999", "must be a number from 0 to 65535"),
        ("example.com:80", "\"example.com\" is not an IPv4 address"),
        ("8080", "expected ADDRESS:PORT"),
    ])
    func malformedAddressesSayWhatIsWrong(_ text: String, _ message: String) {
        switch ListenAddress.parse(text) {
        case .success(let address): Issue.record("\(text) parsed as \(address)")
        case .failure(let error): #expect(error.description.contains(message), "\(error)")
        }
    }
}
