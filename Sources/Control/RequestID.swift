/// A request's `id` as the reply echoes it: exactly the client's text for a number (`18446744073709551616`
/// stays that, not `1.8446744073709552e+19`; `1.50` stays `1.50`), the canonical JSON of a string.
struct RequestID: Sendable, Equatable {
    /// The parsed value (what handlers see as `ControlRequest.id`).
    let value: JSONValue
    /// The JSON text written into the reply.
    let text: String

    static let null = RequestID(value: .null, text: "null")

    init(value: JSONValue, text: String) {
        self.value = value
        self.text = text
    }

    /// The id `value` of the request `line` (a valid JSON object): numbers keep their text from the line.
    init(_ value: JSONValue, in line: some Collection<UInt8>) {
        self.value = value
        switch value {
        case .int, .number: text = Self.rawMember("id", in: Array(line)) ?? value.jsonText
        default: text = value.jsonText
        }
    }

    /// The raw text of the top-level member `key` of a JSON object (the last one when repeated), nil
    /// when not found. Keys written with escapes are not matched (the caller falls back to the value).
    static func rawMember(_ key: String, in bytes: [UInt8]) -> String? {
        var scanner = Scanner(bytes: bytes)
        scanner.skipSpace()
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        var found: String?
        while true {
            scanner.skipSpace()
            guard let name = scanner.stringSpan() else { return found }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ":")) else { return found }
            scanner.skipSpace()
            let start = scanner.index
            scanner.skipValue()
            if bytes[name] == ArraySlice(Array("\"\(key)\"".utf8)) {
                found = String(decoding: bytes[start..<scanner.index], as: UTF8.self)
            }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ",")) else { return found }
        }
    }

    /// Just enough of a JSON scanner to find a member's span in text already known to be valid.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// The span of a string, quotes included.
        mutating func stringSpan() -> Range<Int>? {
            let start = index
            guard take(UInt8(ascii: "\"")) else { return nil }
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { return start..<index }
            }
            return nil
        }

        /// Moves past one value: a string, an object or array (with nesting), or a scalar token.
        mutating func skipValue() {
            guard index < bytes.count else { return }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                _ = stringSpan()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        _ = stringSpan()
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                    default: break
                    }
                    index += 1
                    if depth == 0 { return }
                }
            default:
                while index < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
                    index += 1
                }
            }
        }
    }
}
