import Foundation
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// A TSL UMD receiver for tests, decoding from the protocol's published layout (not from the sender's
/// code): 5.0 over UDP (one packet per datagram) or TCP (a listener; DLE/STX framed, DLE doubled), or
/// 3.1 over UDP (18-byte messages; its tally 1 reads as `left`, tally 2 as `right`, the address as
/// `index`). It keeps every display message it received, in order.
public final class TSLReceiver: @unchecked Sendable {
    // @unchecked Sendable: `fd`, `listener` and `buffer` are touched only by the test's thread that
    // calls `receive`; `received` is guarded by `lock`.

    /// One display message as it arrived.
    public struct Display: Sendable, Equatable, CustomStringConvertible {
        public var screen: UInt16
        public var index: UInt16
        /// Right, text and left tally (0 off, 1 red, 2 green, 3 amber) and brightness.
        public var right: Int, text: Int, left: Int, brightness: Int
        public var label: String
        public var arrived: Date
        public var description: String { "screen \(screen) index \(index) \(label): L\(left) R\(right) T\(text)" }
    }

    public let port: Int
    private let v31: Bool
    private let listener: Int32
    private var fd: Int32 = -1
    private var buffer: [UInt8] = []
    private let lock = NSLock()
    private var received: [Display] = []
    /// TCP connections accepted so far.
    public private(set) var connections = 0

    /// A UDP receiver (`tcp` false) or a TCP listener on 127.0.0.1 and a free port; `v31`: TSL 3.1 (UDP).
    public init(tcp: Bool, v31: Bool = false) throws {
        self.v31 = v31
        let type = tcp ? SOCK_STREAM : SOCK_DGRAM
        let socketFD = try syscall("socket") { socket(AF_INET, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        var address = NginxRTMP.loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, !tcp || listen(socketFD, 4) == 0 else {
            let code = errno
            close(socketFD)
            throw SystemError(call: "bind", errno: code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        if tcp { listener = socketFD } else { listener = -1; fd = socketFD }
    }

    deinit {
        if fd >= 0 { close(fd) }
        if listener >= 0 { close(listener) }
    }

    public var displays: [Display] { lock.lock(); defer { lock.unlock() }; return received }

    /// The newest message of each index, by index.
    public var latest: [UInt16: Display] {
        displays.reduce(into: [:]) { $0[$1.index] = $1 }
    }

    /// Receives (accepting a TCP connection first when there is none) until `condition` holds on
    /// everything received, or `seconds` pass.
    @discardableResult
    public func receive(seconds: Double, until condition: (TSLReceiver) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition(self) {
            guard Date() < deadline else { return false }
            let waiting = fd >= 0 ? fd : listener
            var poller = pollfd(fd: waiting, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            if fd < 0 {
                fd = accept(listener, nil, nil)
                if fd >= 0 { connections += 1 }
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 {
                if listener >= 0 { closeConnection() }
                continue
            }
            if listener >= 0 {
                buffer += chunk[..<count]
                for packet in Self.unframe(&buffer) { note(packet) }
            } else {
                note(Array(chunk[..<count]))
            }
        }
        return true
    }

    /// Closes the accepted TCP connection (the sender should connect again).
    public func closeConnection() {
        if fd >= 0, listener >= 0 { close(fd); fd = -1; buffer = [] }
    }

    private func note(_ packet: [UInt8]) {
        guard let display = v31 ? Self.decode31(packet) : Self.decode(packet) else { return }
        lock.lock()
        received.append(display)
        lock.unlock()
    }

    /// The packets in a TCP stream: each starts with DLE STX; DLE DLE is one DLE. What is incomplete
    /// (no next DLE STX yet and fewer bytes than its byte count says) stays in `buffer`.
    static func unframe(_ buffer: inout [UInt8]) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        while buffer.count >= 2, buffer[0] == 0xFE, buffer[1] == 0x02 {
            var packet: [UInt8] = []
            var index = 2
            var complete = false
            while index < buffer.count {
                if buffer[index] == 0xFE {
                    guard index + 1 < buffer.count else { break }
                    if buffer[index + 1] == 0xFE { packet.append(0xFE); index += 2; continue }
                    complete = true  // the next DLE STX
                    break
                }
                packet.append(buffer[index])
                index += 1
                if packet.count >= 2, packet.count == 2 + (Int(packet[0]) | Int(packet[1]) << 8) { complete = true; break }
            }
            guard complete else { break }
            packets.append(packet)
            buffer.removeFirst(index)
        }
        return packets
    }

    /// Header (0x80 + address), control (bit 0 tally 1, bit 1 tally 2, bits 4-5 brightness), 16 characters.
    static func decode31(_ packet: [UInt8]) -> Display? {
        guard packet.count == 18, packet[0] >= 0x80, packet[1] & 0xC0 == 0 else { return nil }
        return Display(screen: 0, index: UInt16(packet[0] - 0x80), right: Int(packet[1] >> 1 & 1), text: 0, left: Int(packet[1] & 1),
                       brightness: Int(packet[1] >> 4 & 3), label: String(decoding: packet[2...], as: UTF8.self), arrived: Date())
    }

    /// PBC, VER, FLAGS, SCREEN, then one DMSG (INDEX, CONTROL, LENGTH, TEXT), 16-bit values little-endian.
    static func decode(_ packet: [UInt8]) -> Display? {
        func word(_ at: Int) -> Int { Int(packet[at]) | Int(packet[at + 1]) << 8 }
        guard packet.count >= 12, word(0) == packet.count - 2 else { return nil }
        let unicode = packet[3] & 0x01 != 0
        let control = word(8), length = word(10)
        guard control & 0x8000 == 0, packet.count >= 12 + length else { return nil }
        let text = Array(packet[12..<(12 + length)])
        let label = unicode
            ? String(decoding: stride(from: 0, to: text.count - 1, by: 2).map { UInt16(text[$0]) | UInt16(text[$0 + 1]) << 8 }, as: UTF16.self)
            : String(decoding: text, as: UTF8.self)
        return Display(screen: UInt16(word(4)), index: UInt16(word(6)), right: control & 0x03, text: (control >> 2) & 0x03,
                       left: (control >> 4) & 0x03, brightness: (control >> 6) & 0x03, label: label, arrived: Date())
    }
}
