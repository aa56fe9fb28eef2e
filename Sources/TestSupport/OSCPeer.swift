import Foundation
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// An OSC peer for tests: a UDP socket on 127.0.0.1 and a free port that sends datagrams and keeps what
/// arrives. Packets are built and read by Tests/TallyOutTests/osc_packet.py (python3's struct, from
/// the OSC 1.0 layout), independently of studio's own codec.
public final class OSCPeer: @unchecked Sendable {
    // @unchecked Sendable: `fd` is set once; `received` is touched only by the test's thread.
    public let port: UInt16
    private let fd: Int32
    /// Every datagram received so far, decoded by the script (its JSON), in order.
    public private(set) var received: [String] = []

    public init() throws {
        let fd = try syscall("socket") { socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        do {
            try syscall("bind") { withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } } }
        } catch {
            close(fd)
            throw error
        }
        var bound = sockaddr_in()
        var size = length
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) } }
        port = UInt16(bigEndian: bound.sin_port)
    }

    deinit { close(fd) }

    /// Sends `bytes` to 127.0.0.1:`port`.
    public func send(_ bytes: [UInt8], to port: UInt16) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        _ = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
    }

    /// Sends the packet `spec` describes (the script's JSON) to `port`.
    public func send(_ spec: String, to port: UInt16) throws { send(try Self.encode(spec), to: port) }

    /// Receives until `condition` holds for what was received or `seconds` pass. Datagrams are read as
    /// they come and decoded in batches (one python3 per batch), each with its arrival time.
    public func receive(seconds: Double, until condition: ([String]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition(received) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(max(1, left * 1000))) > 0 else { continue }
            var batch: [[UInt8]] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard count > 0 else { break }
                batch.append(Array(buffer[..<count]))
                arrivals.append(Date())
            }
            let decoded = (try? Self.decode(batch)) ?? batch.map { "undecodable: " + Self.hex($0) }
            received += decoded
        }
        return true
    }

    /// When each of `received` arrived.
    public private(set) var arrivals: [Date] = []

    /// Whether a message `/address` with exactly `arguments` (the script's JSON of them, `["s", "cam2"]`) arrived.
    public func got(_ address: String, _ arguments: String...) -> Bool { received.contains(Self.message(address, arguments)) }

    /// The script's JSON for a message: `["/studio/tally/cam2", ["i", 1]]`.
    public static func message(_ address: String, _ arguments: [String]) -> String {
        "[\"\(address)\"" + arguments.map { ", " + $0 }.joined() + "]"
    }

    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/TallyOutTests/osc_packet.py").path

    /// The packet's bytes, from the script.
    public static func encode(_ spec: String) throws -> [UInt8] {
        let hex = try run("encode", spec)
        return stride(from: 0, to: hex.count - 1, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? 0
        }
    }

    /// The packet as the script reads it (its JSON).
    public static func decode(_ bytes: [UInt8]) throws -> String { try run("decode", hex(bytes)) }

    /// The packets as the script reads them, one JSON each.
    public static func decode(_ packets: [[UInt8]]) throws -> [String] {
        guard !packets.isEmpty else { return [] }
        let lines = try run("decode", packets.map(hex)).split(separator: "\n").map(String.init)
        guard lines.count == packets.count else { throw SystemError(call: "osc_packet.py decode: \(lines.count) lines for \(packets.count) packets", errno: EINVAL) }
        return lines
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    private static func run(_ mode: String, _ arguments: String...) throws -> String { try run(mode, arguments) }

    private static func run(_ mode: String, _ arguments: [String]) throws -> String {
        let child = try ChildProcess(executable: "/usr/bin/python3", arguments: [script, mode] + arguments)
        guard child.wait(timeout: 20) == .exited(0) else {
            child.terminate(signal: SIGKILL)
            throw SystemError(call: "osc_packet.py \(mode) \(arguments.joined(separator: " ").prefix(200)): \(child.errorText())", errno: EINVAL)
        }
        return child.outputText().trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
