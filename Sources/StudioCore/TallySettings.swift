/// Tally out to studio hardware and software (`tally:` in the config; docs/control-surfaces.md): TSL UMD
/// destinations and the vMix-compatible tally server. Nothing by default.
public struct TallySettings: Sendable, Equatable {
    /// Where TSL UMD packets go, each with its own version and transport.
    public var tsl: [TSLDestination] = []
    /// The vMix-compatible TCP tally server (`vmix_port`, `vmix_listen`); nil: off.
    public var vmix: ListenAddress?
    /// Whether vMix clients may switch (`FUNCTION PreviewInput`, `Cut`, `CutDirect`); read-only otherwise.
    public var vmixFunctions = false

    /// vMix's own port, which lights and Tally Arbiter expect.
    public static let vmixDefaultPort: UInt16 = 8099
    /// The vMix server's address when `vmix_listen` is not given: loopback only.
    public static let vmixDefaultHost = "127.0.0.1"

    public init(tsl: [TSLDestination] = [], vmix: ListenAddress? = nil, vmixFunctions: Bool = false) {
        self.tsl = tsl
        self.vmix = vmix
        self.vmixFunctions = vmixFunctions
    }

    public var isEmpty: Bool { tsl.isEmpty && vmix == nil }
}

/// One TSL UMD receiver: a tally light, an under-monitor display, a multiviewer, Tally Arbiter.
public struct TSLDestination: Sendable, Equatable, CustomStringConvertible {
    public enum Version: String, Sendable, CaseIterable {
        /// 18-byte packets: an address, four tally bits and brightness, 16 ASCII characters (UDP only).
        case v31 = "3.1"
        /// Screen and index, left/right/text tally in red, green or amber, ASCII or UTF-16LE text.
        case v5 = "5"
    }

    public enum Transport: String, Sendable, CaseIterable {
        case udp, tcp
    }

    /// The receiver's IP address and port (no host names: a show does not wait for DNS).
    public var address: ListenAddress
    public var version: Version
    public var transport: Transport
    /// TSL 5.0's screen (0 to 65534); unused by 3.1.
    public var screen: UInt16
    /// TSL 3.1's tally bit for program, 1 or 2 (`program_tally`); preview is the other. Receivers differ:
    /// tally 1 is red on most displays, Tally Arbiter and Companion's listener read tally 2 as program.
    public var programTally: Int

    public init(address: ListenAddress, version: Version = .v5, transport: Transport = .udp, screen: UInt16 = 0, programTally: Int = 1) {
        self.address = address
        self.version = version
        self.transport = transport
        self.screen = screen
        self.programTally = programTally
    }

    /// `tsl 5 udp 127.0.0.1:8900 screen 0`, for the log.
    public var description: String {
        "TSL \(version.rawValue) \(transport.rawValue) \(address)" + (version == .v5 ? " screen \(screen)" : "")
    }
}
