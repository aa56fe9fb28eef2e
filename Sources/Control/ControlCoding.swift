import Foundation
import StudioCore
#if canImport(Glibc)
import Glibc
#endif

/// The one JSON configuration of the control protocol: replies, events and arguments are Codable
/// values encoded and decoded here. Keys are written sorted and slashes unescaped (as `JSONValue`
/// writes them); dates are ISO 8601 UTC with milliseconds (`ISO8601Time`). Each value declares its
/// wire keys in its `CodingKeys`, and an optional that must appear as `null` when absent is
/// `@Nullable` (a plain optional is left out).
public enum ControlCoding {
    /// The encoder of every reply and event. `JSONEncoder` copies its options when it encodes, so one
    /// instance serves every thread.
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601Time.format(date))
        }
        return encoder
    }()

    /// The decoder of arguments (server side) and replies (the CLI).
    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = ISO8601Time.parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 time: \(text)")
            }
            return date
        }
        return decoder
    }()
}

extension JSONValue {
    /// Converts an `Encodable` value (a reply, an event) through `ControlCoding.encoder`.
    public init(encoding value: some Encodable) throws {
        let data = try ControlCoding.encoder.encode(value)
        // Read by the encoder's own reader (JSONTextReader: fast); the decoder only for text it does not expect.
        self = try JSONTextReader.read(data) ?? JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Decodes the value as `type` through `ControlCoding.decoder` (the CLI reads replies this way).
    public func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try ControlCoding.decoder.decode(type, from: Data(jsonText.utf8))
    }
}

/// An optional written as `null` when absent (`"lost_reason": null`), where a plain optional property
/// would be left out of the object. Decoding accepts a missing key as nil too.
@propertyWrapper
public struct Nullable<Value: Codable & Sendable>: Codable, Sendable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension Nullable: Equatable where Value: Equatable {}

extension KeyedDecodingContainer {
    /// A `@Nullable` property whose key is missing decodes as nil (synthesized decoding asks for the key).
    public func decode<Value>(_ type: Nullable<Value>.Type, forKey key: Key) throws -> Nullable<Value> {
        try decodeIfPresent(type, forKey: key) ?? Nullable(wrappedValue: nil)
    }
}

/// Times as studio writes them everywhere: ISO 8601 in UTC with milliseconds, `2024-05-01T18:03:04.123Z`.
public enum ISO8601Time {
    /// The time rounded to the millisecond (as the event store keeps times), in UTC.
    public static func format(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let wholeSeconds = floorDivide(milliseconds, 1000)
        var seconds = time_t(wholeSeconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + "\(pad(Int32(milliseconds - wholeSeconds * 1000), 3))Z"
    }

    /// Reads what `format` writes (exactly, to the millisecond); other ISO 8601 forms through Foundation.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int32? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int32 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int32(byte - UInt8(ascii: "0"))
            }
            return value
        }
        if bytes.count == 24, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
           bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."),
           bytes[23] == UInt8(ascii: "Z"),
           let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
           let minute = number(14..<16), let second = number(17..<19), let millisecond = number(20..<23) {
            var parts = tm()
            parts.tm_year = year - 1900
            parts.tm_mon = month - 1
            parts.tm_mday = day
            parts.tm_hour = hour
            parts.tm_min = minute
            parts.tm_sec = second
            let seconds = timegm(&parts)
            return Date(timeIntervalSince1970: Double(Int64(seconds) * 1000 + Int64(millisecond)) / 1000)
        }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    /// Division rounding toward negative infinity (times before 1970 keep a positive millisecond part).
    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
