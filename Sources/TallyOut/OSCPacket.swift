/// Open Sound Control 1.0 (opensoundcontrol.org's specification), as TouchOSC, Companion's generic OSC
/// module and lighting desks send it: a message (an address, a type tag string, arguments) or a bundle
/// (`#bundle`, a time tag, elements each preceded by its size, bundles nested). Every string is
/// NUL-terminated and padded with NULs to a multiple of 4 bytes; numbers are big-endian. The types are
/// those of the 1.0 core and its common extensions that carry no payload beyond 8 bytes:
/// `i` int32, `f` float32, `s` string, `h` int64, `d` float64, `T` true, `F` false, `N` nil.
///
/// The decoder is strict: a packet that is not exactly what the layout says (a size that is no multiple
/// of 4, a string without its NUL or with padding other than NULs, an unknown type tag, an element that
/// claims more bytes than the bundle holds, bundles nested deeper than `maximumDepth`, bytes left over)
/// is refused with the reason, never half-read.
public enum OSCArgument: Sendable, Equatable {
    case int32(Int32), float32(Float), string(String), int64(Int64), float64(Double), bool(Bool), null

    /// The type tag: `i`, `f`, `s`, `h`, `d`, `T`, `F` or `N`.
    public var tag: Character {
        switch self {
        case .int32: "i"
        case .float32: "f"
        case .string: "s"
        case .int64: "h"
        case .float64: "d"
        case .bool(let value): value ? "T" : "F"
        case .null: "N"
        }
    }
}

public struct OSCMessage: Sendable, Equatable, CustomStringConvertible {
    public var address: String
    public var arguments: [OSCArgument]

    public init(_ address: String, _ arguments: [OSCArgument] = []) {
        self.address = address
        self.arguments = arguments
    }

    /// `/studio/switch s:cam2`, for the log.
    public var description: String {
        ([address] + arguments.map { argument in
            switch argument {
            case .int32(let value): "i:\(value)"
            case .float32(let value): "f:\(value)"
            case .string(let value): "s:\(value)"
            case .int64(let value): "h:\(value)"
            case .float64(let value): "d:\(value)"
            case .bool(let value): value ? "T" : "F"
            case .null: "N"
            }
        }).joined(separator: " ")
    }
}

/// Why a packet was refused, in words (`the type tag string has an unknown tag 'b'`).
public struct OSCError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

public indirect enum OSCPacket: Sendable, Equatable {
    case message(OSCMessage)
    /// A bundle's time tag (NTP format; 1 means "at once") and its elements, in order.
    case bundle(timeTag: UInt64, elements: [OSCPacket])

    /// Bundles inside bundles inside ...: deeper than this is refused.
    public static let maximumDepth = 8
    static let bundleTag: [UInt8] = Array("#bundle".utf8) + [0]

    /// Every message, depth first in order (a bundle's time tag is not waited for: we act at once).
    public var messages: [OSCMessage] {
        switch self {
        case .message(let message): [message]
        case .bundle(_, let elements): elements.flatMap(\.messages)
        }
    }

    // MARK: Encoding

    /// The packet's bytes.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return bytes
    }

    private func append(to bytes: inout [UInt8]) {
        switch self {
        case .message(let message):
            Self.appendString(message.address, to: &bytes)
            Self.appendString("," + String(message.arguments.map(\.tag)), to: &bytes)
            for argument in message.arguments {
                switch argument {
                case .int32(let value): Self.appendBigEndian(UInt32(bitPattern: value), to: &bytes)
                case .float32(let value): Self.appendBigEndian(value.bitPattern, to: &bytes)
                case .string(let value): Self.appendString(value, to: &bytes)
                case .int64(let value): Self.appendBigEndian(UInt64(bitPattern: value), to: &bytes)
                case .float64(let value): Self.appendBigEndian(value.bitPattern, to: &bytes)
                case .bool, .null: break
                }
            }
        case .bundle(let timeTag, let elements):
            bytes += Self.bundleTag
            Self.appendBigEndian(timeTag, to: &bytes)
            for element in elements {
                let encoded = element.encoded
                Self.appendBigEndian(UInt32(encoded.count), to: &bytes)
                bytes += encoded
            }
        }
    }

    /// The string's UTF-8 bytes (up to a NUL it may hold), its NUL, then NULs to a multiple of 4.
    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes += text.utf8.prefix { $0 != 0 }
        bytes.append(0)
        while bytes.count % 4 != 0 { bytes.append(0) }
    }

    private static func appendBigEndian<Value: FixedWidthInteger>(_ value: Value, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    // MARK: Decoding

    /// The packet in `bytes` (one datagram), or why it is not one.
    public static func decode(_ bytes: [UInt8]) throws(OSCError) -> OSCPacket {
        try decode(bytes[...], depth: 0)
    }

    private static func decode(_ bytes: ArraySlice<UInt8>, depth: Int) throws(OSCError) -> OSCPacket {
        guard !bytes.isEmpty else { throw OSCError("an empty packet") }
        guard bytes.count % 4 == 0 else { throw OSCError("\(bytes.count) bytes, not a multiple of 4") }
        var reader = Reader(bytes: bytes)
        if bytes.starts(with: bundleTag) {
            guard depth < maximumDepth else { throw OSCError("bundles nested deeper than \(maximumDepth)") }
            reader.offset += bundleTag.count
            let timeTag = try reader.integer(UInt64.self, "the bundle's time tag")
            var elements: [OSCPacket] = []
            while !reader.isAtEnd {
                let size = Int(try reader.integer(UInt32.self, "a bundle element's size"))
                guard size > 0, size % 4 == 0 else { throw OSCError("a bundle element's size \(size) is not a positive multiple of 4") }
                guard size <= reader.remaining else {
                    throw OSCError("a bundle element claims \(size) bytes, only \(reader.remaining) follow")
                }
                let start = reader.bytes.startIndex + reader.offset
                do { elements.append(try decode(bytes[start..<(start + size)], depth: depth + 1)) } catch {
                    throw OSCError("bundle element \(elements.count + 1): \(error.reason)")
                }
                reader.offset += size
            }
            return .bundle(timeTag: timeTag, elements: elements)
        }
        guard bytes.first == UInt8(ascii: "/") else {
            throw OSCError("neither a message (an address starting with /) nor a bundle (#bundle)")
        }
        let address = try reader.string("the address")
        // A message with nothing after its address has no arguments (the 1.0 spec asks to accept a
        // missing type tag string); anything else must start with its type tags.
        if reader.isAtEnd { return .message(OSCMessage(address)) }
        let tags = try reader.string("the type tag string")
        guard tags.first == "," else { throw OSCError("the type tag string \(quoted(tags)) does not start with ','") }
        var arguments: [OSCArgument] = []
        for tag in tags.dropFirst() {
            let what = "argument \(arguments.count + 1) (\(tag))"
            switch tag {
            case "i": arguments.append(.int32(Int32(bitPattern: try reader.integer(UInt32.self, what))))
            case "f": arguments.append(.float32(Float(bitPattern: try reader.integer(UInt32.self, what))))
            case "s": arguments.append(.string(try reader.string(what)))
            case "h": arguments.append(.int64(Int64(bitPattern: try reader.integer(UInt64.self, what))))
            case "d": arguments.append(.float64(Double(bitPattern: try reader.integer(UInt64.self, what))))
            case "T": arguments.append(.bool(true))
            case "F": arguments.append(.bool(false))
            case "N": arguments.append(.null)
            default: throw OSCError("the type tag string has an unknown or unsupported tag \(quoted(String(tag))) (i f s h d T F N are read)")
            }
        }
        guard reader.isAtEnd else { throw OSCError("\(reader.remaining) bytes after the last argument") }
        return .message(OSCMessage(address, arguments))
    }

    private static func quoted(_ text: String) -> String {
        "'" + String(text.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" }) + "'"
    }

    /// Reads through a packet's bytes; every read checks that what it needs is there.
    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var offset = 0

        var remaining: Int { bytes.count - offset }
        var isAtEnd: Bool { remaining == 0 }

        mutating func integer<Value: FixedWidthInteger & UnsignedInteger>(_ type: Value.Type, _ what: String) throws(OSCError) -> Value {
            let size = MemoryLayout<Value>.size
            guard remaining >= size else { throw OSCError("\(what): needs \(size) bytes, \(remaining) left") }
            var value: Value = 0
            let start = bytes.startIndex + offset
            for byte in bytes[start..<(start + size)] { value = value << 8 | Value(byte) }
            offset += size
            return value
        }

        /// A NUL-terminated UTF-8 string padded with NULs to a multiple of 4.
        mutating func string(_ what: String) throws(OSCError) -> String {
            let start = bytes.startIndex + offset
            guard let end = bytes[start...].firstIndex(of: 0) else { throw OSCError("\(what) has no terminating NUL") }
            let padded = (end - start) / 4 * 4 + 4
            guard start + padded <= bytes.endIndex else { throw OSCError("\(what) is not padded to a multiple of 4") }
            guard bytes[end..<(start + padded)].allSatisfy({ $0 == 0 }) else { throw OSCError("\(what) is padded with bytes other than NUL") }
            guard let text = String(validating: bytes[start..<end], as: UTF8.self) else { throw OSCError("\(what) is not UTF-8") }
            offset += padded
            return text
        }
    }
}
