import Testing
import StudioCore
@testable import StudioConfig

/// `tally:` and a pin's `index:`: what they read, and errors that name the key.
@Suite struct TallyConfigTests {
    @Test func destinationsAndTheVMixServerAreRead() throws {
        let config = try StudioConfiguration.parse(yaml: """
            tally:
              tsl:
                - {address: 127.0.0.1:8900, version: 5, transport: udp, screen: 2}
                - {address: "[::1]:9000", transport: tcp}
                - {address: 127.0.0.1:8901, version: 3.1, program_tally: 2}
              vmix_port: 8099
              vmix_functions: true
            cameras:
              pins:
                - {match: a, name: host, index: 4}
            """, source: "t.yaml")
        #expect(config.tally.tsl == [
            TSLDestination(address: ListenAddress(host: "127.0.0.1", port: 8900), version: .v5, transport: .udp, screen: 2),
            TSLDestination(address: ListenAddress(host: "::1", port: 9000), version: .v5, transport: .tcp),
            TSLDestination(address: ListenAddress(host: "127.0.0.1", port: 8901), version: .v31, transport: .udp, programTally: 2),
        ])
        #expect(config.tally.vmix == ListenAddress(host: "127.0.0.1", port: 8099) && config.tally.vmixFunctions)
        #expect(config.cameras.pins.first?.tallyIndex == 4)
        #expect(config.jsonSnapshot().contains("\"tally\":{\"tsl\":[{\"address\":\"127.0.0.1:8900\",\"screen\":2,\"transport\":\"udp\",\"version\":\"5\"}"))
        // Nothing said, nothing on (and no key in the snapshot).
        let plain = try StudioConfiguration.parse(yaml: "tally:\n  vmix_port: 8099\n  vmix_listen: 0.0.0.0\n", source: "t.yaml")
        #expect(plain.tally.vmix == ListenAddress(host: "0.0.0.0", port: 8099) && !plain.tally.vmixFunctions && plain.tally.tsl.isEmpty)
        #expect(!StudioConfiguration().jsonSnapshot().contains("tally"))
    }

    @Test(arguments: [
        ("tally:\n  tsl:\n    - {version: 5}\n", "tally.tsl[0].address", "missing"),
        ("tally:\n  tsl:\n    - {address: tally.local:8900}\n", "tally.tsl[0].address", "is not an IPv4 address"),
        ("tally:\n  tsl:\n    - {address: 127.0.0.1:8900, version: 4}\n", "tally.tsl[0].version", "3.1 or 5"),
        ("tally:\n  tsl:\n    - {address: 127.0.0.1:8900, transport: serial}\n", "tally.tsl[0].transport", "udp or tcp"),
        ("tally:\n  tsl:\n    - {address: 127.0.0.1:8900, version: 3.1, transport: tcp}\n", "tally.tsl[0].transport", "UDP only"),
        ("tally:\n  tsl:\n    - {address: 127.0.0.1:8900, version: 3.1, screen: 1}\n", "tally.tsl[0].screen", "TSL 5"),
        ("tally:\n  tsl:\n    - {address: 127.0.0.1:8900, screen: 65535}\n", "tally.tsl[0].screen", "0 to 65534"),
        ("tally:\n  tsl:\n    - {address: 127.0.0.1:8900, version: 3.1, program_tally: 3}\n", "tally.tsl[0].program_tally", "1 or 2"),
        ("tally:\n  tsl:\n    - {address: 127.0.0.1:8900, program_tally: 2}\n", "tally.tsl[0].program_tally", "TSL 3.1's"),
        ("tally:\n  tsl:\n    - {address: 127.0.0.1:8900}\n    - {address: 127.0.0.1:8900}\n", "tally.tsl[1].address", "twice"),
        ("tally:\n  tsl:\n    - {address: 127.0.0.1:8900, colour: red}\n", "tally.tsl[0].colour", "address"),
        ("tally:\n  vmix_port: 0\n", "tally.vmix_port", "1 to 65535"),
        ("tally:\n  vmix_listen: 0.0.0.0\n", "tally.vmix_listen", "vmix_port"),
        ("tally:\n  vmix_port: 8099\n  vmix_listen: everywhere\n", "tally.vmix_listen", "IP address"),
        ("tally:\n  vmix_functions: true\n", "tally.vmix_functions", "vmix_port"),
        ("tally:\n  vmix: 8099\n", "tally.vmix", "vmix_port"),
        ("cameras:\n  pins:\n    - {match: a, name: a, index: 0}\n", "cameras.pins[0].index", "1 to 65534"),
        ("cameras:\n  pins:\n    - {match: a, name: a, index: 3}\n    - {match: b, name: b, index: 3}\n", "cameras.pins[1].index", "already given"),
    ])
    func badSettingsAreRefusedAtTheirKey(_ yaml: String, _ keyPath: String, _ words: String) {
        expectRefused(yaml, at: keyPath, saying: words)
    }
}
