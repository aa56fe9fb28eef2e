/// A capture node's frame capture time, carried in its H.264 stream to the switcher as an SEI message
/// (user_data_unregistered, payload type 5) under our own UUID, one per picture, before its slices.
/// Written into the encoder's packets (not through the encoder), so it is the same for x264 and VAAPI;
/// read from the packets the switcher demuxes (before decoding, so pictures that are not decoded count too).
///
/// Payload: the UUID (16 bytes), a version (1), flags (bit 0: the node had measured its clock offset),
/// the capture time in microseconds since 1970 (8 bytes, big-endian, signed) in the switcher's time
/// base (the node's clock plus its measured offset; its own clock alone while not measured), and the
/// offset added (µs, 8 bytes; 0 while not measured).
public struct CaptureTimeSEI: Sendable, Equatable {
    /// Capture time in µs since 1970, in the switcher's clock when `offsetMeasured`.
    public var captureTime: Int64
    /// The node's offset against the switcher (µs) that was added to its clock.
    public var offset: Int64
    public var offsetMeasured: Bool

    public init(captureTime: Int64, offset: Int64, offsetMeasured: Bool) {
        self.captureTime = captureTime
        self.offset = offset
        self.offsetMeasured = offsetMeasured
    }

    /// studio's own: `studio-capture-time` hashed once, fixed here for ever.
    public static let uuid: [UInt8] = [0x5d, 0x1f, 0x0e, 0x7a, 0x3c, 0x42, 0x4b, 0x19, 0x9a, 0x61, 0xc4, 0x2e, 0x80, 0x37, 0xd2, 0x55]
    static let version: UInt8 = 1
    static let payloadSize = 16 + 2 + 8 + 8

    /// The SEI NAL unit (header byte first, emulation prevention applied, no start code or length).
    public var nalUnit: [UInt8] {
        var payload = Self.uuid + [Self.version, offsetMeasured ? 1 : 0]
        for value in [captureTime, offset] { payload += (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * Int64($0))) } }
        let rbsp = [5, UInt8(Self.payloadSize)] + payload + [0x80]
        var nal: [UInt8] = [0x06]
        var zeros = 0
        for byte in rbsp {
            if zeros >= 2, byte <= 3 {
                nal.append(3)
                zeros = 0
            }
            nal.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return nal
    }

    /// `packet` (4-byte length-prefixed NAL units, as the encoders here give them) with this SEI before
    /// its first slice; unchanged when it has no slice.
    public func inserted(intoLengthPrefixed packet: [UInt8]) -> [UInt8] {
        var position = 0
        while position + 4 < packet.count {
            let length = packet[position..<position + 4].reduce(0) { $0 << 8 | Int($1) }
            guard length > 0, position + 4 + length <= packet.count else { return packet }
            if (1...5).contains(packet[position + 4] & 0x1f) {
                let nal = nalUnit
                let prefix = (0..<4).map { UInt8(truncatingIfNeeded: nal.count >> (24 - 8 * $0)) }
                return Array(packet[..<position]) + prefix + nal + packet[position...]
            }
            position += 4 + length
        }
        return packet
    }

    /// Ours, found among the NAL units of an Annex B access unit (MPEG-TS) before its first slice; nil when none.
    public static func find(inAnnexB bytes: UnsafeBufferPointer<UInt8>) -> CaptureTimeSEI? {
        var index = 0, start: Int? = nil
        // The NAL unit at `range` when it is an SEI of ours.
        func ours(_ range: Range<Int>) -> CaptureTimeSEI? {
            guard let first = range.first, bytes[first] & 0x1f == 6 else { return nil }
            return parse(unescaped(bytes, range.dropFirst()))
        }
        while index + 2 < bytes.count {
            guard bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 else {
                index += 1
                continue
            }
            if let from = start {
                var end = index
                while end > from, bytes[end - 1] == 0 { end -= 1 }
                if let found = ours(from..<end) { return found }
            }
            index += 3
            start = index
            // A slice: ours comes before the slices, and the slice's bytes are not scanned.
            if index < bytes.count, (1...5).contains(bytes[index] & 0x1f) { return nil }
        }
        return start.flatMap { ours($0..<bytes.count) }
    }

    static func unescaped(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var zeros = 0
        for index in range {
            let byte = bytes[index]
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return out
    }

    /// Our message among an SEI RBSP's messages.
    static func parse(_ rbsp: [UInt8]) -> CaptureTimeSEI? {
        var index = 0
        func number() -> Int? {
            var value = 0
            while index < rbsp.count {
                let byte = rbsp[index]
                index += 1
                value += Int(byte)
                if byte != 0xff { return value }
            }
            return nil
        }
        while index < rbsp.count, rbsp[index] != 0x80 {
            guard let type = number(), let size = number(), index + size <= rbsp.count else { return nil }
            let payload = rbsp[index..<index + size]
            index += size
            guard type == 5, size == payloadSize, Array(payload.prefix(16)) == uuid, payload[payload.startIndex + 16] == version else { continue }
            let flags = payload[payload.startIndex + 17]
            func integer(_ at: Int) -> Int64 { payload[(payload.startIndex + at)..<(payload.startIndex + at + 8)].reduce(0) { $0 << 8 | Int64($1) } }
            return CaptureTimeSEI(captureTime: integer(18), offset: integer(26), offsetMeasured: flags & 1 != 0)
        }
        return nil
    }
}
