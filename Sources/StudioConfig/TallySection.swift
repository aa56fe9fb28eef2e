import StudioCore

/// `tally:` — tally out to lights, displays and control surfaces (`TallySettings`, docs/control-surfaces.md).
///
/// ```yaml
/// tally:
///   tsl:                        # TSL UMD receivers
///     - {address: 192.0.2.20:8900, version: 5, transport: udp, screen: 0}
///     - {address: 192.0.2.21:9800, version: 3.1, program_tally: 2}
///   vmix_port: 8099             # the vMix-compatible tally server (off without it)
///   vmix_listen: 127.0.0.1      # its address (loopback by default)
///   vmix_functions: false       # true lets its clients preview and cut
/// ```
struct TallySection: Decodable {
    var settings = TallySettings()

    enum CodingKeys: String, CodingKey, CaseIterable {
        case tsl, vmixPort = "vmix_port", vmixListen = "vmix_listen", vmixFunctions = "vmix_functions"
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping with tsl or vmix_port, got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        settings.tsl = try keys.decodeIfPresent(DestinationList.self, forKey: .tsl)?.destinations ?? []
        let port = try keys.parse(.vmixPort, .tcpPort)
        let host = try keys.parse(.vmixListen, .listenHost)
        try keys.update(&settings.vmixFunctions, .vmixFunctions, .boolean)
        if let port {
            let host = host ?? TallySettings.vmixDefaultHost
            settings.vmix = ListenAddress(host: host, port: port)
        } else if host != nil {
            throw decoder.failure("vmix_listen without vmix_port: give the port too (8099 is vMix's)", at: CodingKeys.vmixListen)
        } else if settings.vmixFunctions {
            throw decoder.failure("vmix_functions without vmix_port: the vMix server is off", at: CodingKeys.vmixFunctions)
        }
    }

    /// `tally.tsl:` — a list of destinations; the same address and port twice is refused.
    struct DestinationList: Decodable {
        var destinations: [TSLDestination] = []

        init(from decoder: any Decoder) throws {
            var items = try decoder.rewording({ "expected a list of TSL destinations, got \($0)" }) { try decoder.unkeyedContainer() }
            while !items.isAtEnd {
                let item = try items.superDecoder()
                let destination = try Self.destination(item)
                if destinations.contains(where: { $0.address == destination.address && $0.transport == destination.transport }) {
                    throw item.failure("\(destination.transport.rawValue) \(destination.address) is listed twice", at: DestinationKeys.address)
                }
                destinations.append(destination)
            }
        }

        static func destination(_ item: any Decoder) throws -> TSLDestination {
            let keys = try item.rewording({ "expected a mapping with address (and version, transport, screen), got \($0)" }) {
                try item.container(keyedBy: DestinationKeys.self)
            }
            guard let address = try keys.parse(.address, .listenAddress) else {
                throw item.failure("missing: the receiver's address and port (192.0.2.20:8900)", at: DestinationKeys.address)
            }
            guard address.port != 0 else { throw item.failure("the receiver's port must not be 0", at: DestinationKeys.address) }
            var destination = TSLDestination(address: address)
            try keys.update(&destination.version, .version, .tslVersion)
            try keys.update(&destination.transport, .transport, .tslTransport)
            if let screen = try keys.parse(.screen, .tslScreen) {
                guard destination.version == .v5 else {
                    throw item.failure("screen is TSL 5's; a TSL 3.1 display has none", at: DestinationKeys.screen)
                }
                destination.screen = screen
            }
            if let tally = try keys.parse(.programTally, .programTally) {
                guard destination.version == .v31 else {
                    throw item.failure("program_tally is TSL 3.1's; TSL 5 says red and green itself", at: DestinationKeys.programTally)
                }
                destination.programTally = tally
            }
            if destination.version == .v31, destination.transport == .tcp {
                throw item.failure("TSL 3.1 goes over UDP only (TCP is TSL 5's)", at: DestinationKeys.transport)
            }
            return destination
        }
    }

    enum DestinationKeys: String, CodingKey, CaseIterable {
        case address, version, transport, screen, programTally = "program_tally"
    }
}

extension TallySettings: Encodable {
    /// For the snapshot.
    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: TallySection.CodingKeys.self)
        var list = keys.nestedUnkeyedContainer(forKey: .tsl)
        for destination in tsl {
            var item = list.nestedContainer(keyedBy: TallySection.DestinationKeys.self)
            try item.encode(destination.address.description, forKey: .address)
            try item.encode(destination.version.rawValue, forKey: .version)
            try item.encode(destination.transport.rawValue, forKey: .transport)
            if destination.version == .v5 { try item.encode(destination.screen, forKey: .screen) }
            if destination.version == .v31 { try item.encode(destination.programTally, forKey: .programTally) }
        }
        try keys.encodeIfPresent(vmix.map { Int($0.port) }, forKey: .vmixPort)
        try keys.encodeIfPresent(vmix?.host, forKey: .vmixListen)
        try keys.encode(vmixFunctions, forKey: .vmixFunctions)
    }
}

extension ValueSyntax where Value == TSLDestination.Version {
    /// 3.1 or 5 (5.0 too).
    static var tslVersion: Self {
        Self("a TSL version") { (text: String) throws(ValueError) -> TSLDestination.Version in
            switch text {
            case "3.1": return .v31
            case "5", "5.0": return .v5
            default: throw ValueError("expected a TSL UMD version, 3.1 or 5, got \(quoted(text))")
            }
        }
    }
}

extension ValueSyntax where Value == Int {
    /// TSL 3.1's tally bit for program: 1 or 2.
    static var programTally: Self {
        Self("1 or 2") { (text: String) throws(ValueError) -> Int in
            guard let tally = Int(text), tally == 1 || tally == 2 else { throw ValueError("expected 1 or 2 (the tally bit for program), got \(quoted(text))") }
            return tally
        }
    }
}

extension ValueSyntax where Value == TSLDestination.Transport {
    /// udp or tcp.
    static var tslTransport: Self {
        Self("a transport") { (text: String) throws(ValueError) -> TSLDestination.Transport in
            guard let transport = TSLDestination.Transport(rawValue: text.lowercased()) else {
                throw ValueError("expected udp or tcp, got \(quoted(text))")
            }
            return transport
        }
    }
}

extension ValueSyntax where Value == UInt16 {
    /// A TSL 5 screen: 0 to 65534 (65535 addresses every screen, a receiver's business).
    static var tslScreen: Self {
        Self("a screen number") { (text: String) throws(ValueError) -> UInt16 in
            guard let screen = UInt16(text), screen < 0xFFFF else { throw ValueError("expected a screen from 0 to 65534, got \(quoted(text))") }
            return screen
        }
    }

    /// A TCP port to listen on: 1 to 65535.
    static var tcpPort: Self {
        Self("a port") { (text: String) throws(ValueError) -> UInt16 in
            guard let port = UInt16(text), port > 0 else { throw ValueError("expected a port from 1 to 65535, got \(quoted(text))") }
            return port
        }
    }

    /// A TSL index (`index:` in a camera's pin): 1 to 65534.
    static var tslIndex: Self {
        Self("an index") { (text: String) throws(ValueError) -> UInt16 in
            guard let index = UInt16(text), index > 0, index < 0xFFFF else {
                throw ValueError("expected a tally index from 1 to 65534, got \(quoted(text))")
            }
            return index
        }
    }
}

extension ValueSyntax where Value == String {
    /// An address to listen on without its port: `127.0.0.1`, `0.0.0.0`, `::1`, `::`.
    static var listenHost: Self {
        Self("an address") { (text: String) throws(ValueError) -> String in
            let written = text.contains(":") && !text.hasPrefix("[") ? "[\(text)]:1" : "\(text):1"
            switch ListenAddress.parse(written) {
            case .success(let address): return address.host
            case .failure: throw ValueError("expected an IP address to listen on (127.0.0.1, 0.0.0.0, ::1), got \(quoted(text))")
            }
        }
    }
}
