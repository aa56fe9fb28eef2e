import Foundation

/// Reads the JSON text `ControlCoding.encoder` writes into a `JSONValue` without Foundation's `JSONDecoder`,
/// which goes through `JSONValue`'s `Decodable` conformance (a `try?` per type guessed for each value): that was
/// two thirds of `studio log --json`'s time over its events (docs/benchmarks.md). The same values: a number
/// that is whole (and within ±2^53) is `.int`, as the decoder's first guess, `Int`, makes it. Text it does not
/// expect (it is never given any from the encoder) returns nil, and the caller decodes as before.
struct JSONTextReader {
    private let bytes: [UInt8]
    private var index = 0

    static func read(_ data: Data) -> JSONValue? {
        var reader = JSONTextReader(bytes: [UInt8](data))
        guard let value = reader.value() else { return nil }
        reader.skipSpace()
        // (Not `: nil`: JSONValue takes a nil literal too, as `.null`.)
        return reader.index == reader.bytes.count ? value : Optional<JSONValue>.none
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) -> JSONValue? {
        let utf8 = Array(word.utf8)
        guard index + utf8.count <= bytes.count, Array(bytes[index..<(index + utf8.count)]) == utf8 else { return nil }
        index += utf8.count
        return value
    }

    private mutating func value() -> JSONValue? {
        skipSpace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [String: JSONValue] = [:]
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipSpace()
                guard let key = string() else { return nil }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                guard let member = value() else { return nil }
                members[key] = member
                guard let more = next(closing: UInt8(ascii: "}")) else { return nil }
                if !more { return .object(members) }
            }
        case UInt8(ascii: "["):
            index += 1
            var elements: [JSONValue] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                guard let element = value() else { return nil }
                elements.append(element)
                guard let more = next(closing: UInt8(ascii: "]")) else { return nil }
                if !more { return .array(elements) }
            }
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    /// After a member or an element: true past a `,` (another follows), false past `close` (the end), nil at
    /// anything else.
    private mutating func next(closing close: UInt8) -> Bool? {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ",") || bytes[index] == close else { return nil }
        index += 1
        return bytes[index - 1] == UInt8(ascii: ",")
    }

    private mutating func number() -> JSONValue? {
        let start = index
        while index < bytes.count, (bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9")) || bytes[index] == UInt8(ascii: "-")
                || bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "e")
                || bytes[index] == UInt8(ascii: "E") { index += 1 }
        guard index > start else { return nil }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if let integer = Int(text) { return .int(integer) }
        guard let double = Double(text), double.isFinite else { return nil }
        if double.rounded() == double, abs(double) <= 9_007_199_254_740_992 { return .int(Int(double)) }
        return .number(double)
    }

    private mutating func string() -> String? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        index += 1
        var scalars = String.UnicodeScalarView()
        var run = index
        func flush(_ end: Int) -> Bool {
            guard end > run else { return true }
            guard let text = String(validating: bytes[run..<end], as: UTF8.self) else { return false }
            scalars.append(contentsOf: text.unicodeScalars)
            return true
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                guard flush(index) else { return nil }
                index += 1
                return String(scalars)
            }
            guard byte == UInt8(ascii: "\\") else { index += 1; continue }
            guard flush(index), index + 1 < bytes.count else { return nil }
            let escaped = bytes[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "u"):
                guard var code = hex4() else { return nil }
                if (0xD800..<0xDC00).contains(code) {
                    // A surrogate pair: the low half follows as another \u escape.
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
                    index += 2
                    guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { return nil }
                scalars.append(scalar)
            default: return nil
            }
            run = index
        }
        return nil
    }

    private mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16) else { return nil }
        index += 4
        return code
    }
}
