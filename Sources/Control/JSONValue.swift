import Foundation
import StudioCore

/// A JSON value, so command handlers build results and read arguments without `Any`.
///
/// Integers that fit in `Int` decode as `.int`; other numbers as `.number`. `.int(2)` and `.number(2)`
/// compare equal, so callers need not care which one a peer sent.
public enum JSONValue: Sendable, Codable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    // MARK: Accessors

    public var isNull: Bool { if case .null = self { return true } else { return false } }

    public var boolValue: Bool? { if case .bool(let value) = self { return value } else { return nil } }

    public var stringValue: String? { if case .string(let value) = self { return value } else { return nil } }

    /// The value as an integer: `.int`, or a `.number` with no fractional part that fits in `Int`.
    public var intValue: Int? {
        switch self {
        case .int(let value): return value
        case .number(let value):
            guard value.isFinite, value.rounded() == value, let exact = Int(exactly: value) else { return nil }
            return exact
        default: return nil
        }
    }

    /// The value as a double, for `.int` and `.number`.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }

    public var arrayValue: [JSONValue]? { if case .array(let value) = self { return value } else { return nil } }

    public var objectValue: [String: JSONValue]? { if case .object(let value) = self { return value } else { return nil } }

    /// The member `key` of an object; nil for a missing key or a non-object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index` of an array; nil when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// A short name of the value's type, for error messages (`expected a string, got an array`).
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    // MARK: Equality

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let l), .bool(let r)): return l == r
        case (.int(let l), .int(let r)): return l == r
        case (.number(let l), .number(let r)): return l == r
        case (.int(let l), .number(let r)), (.number(let r), .int(let l)): return Double(exactly: l) == r
        case (.string(let l), .string(let r)): return l == r
        case (.array(let l), .array(let r)): return l == r
        case (.object(let l), .object(let r)): return l == r
        default: return false
        }
    }

    // MARK: Codable

    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: Decoder) throws {
        if let single = try? decoder.singleValueContainer() {
            if single.decodeNil() { self = .null; return }
            if let value = try? single.decode(Bool.self) { self = .bool(value); return }
            if let value = try? single.decode(Int.self) { self = .int(value); return }
            if let value = try? single.decode(Double.self) { self = .number(value); return }
            if let value = try? single.decode(String.self) { self = .string(value); return }
        }
        if var list = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !list.isAtEnd { elements.append(try list.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        guard let keyed = try? decoder.container(keyedBy: MemberKey.self) else {
            // A value that is no null, boolean, string, array, object or number that fits a Double: a number
            // out of range (1e309). Foundation would say it expected a Dictionary<String, Any>; say what it is.
            let path = decoder.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription:
                "the number\(path.isEmpty ? "" : " at \(path)") is too large (JSON numbers here are at most about 1.8e308)"))
        }
        var members: [String: JSONValue] = [:]
        for key in keyed.allKeys { members[key.stringValue] = try keyed.decode(JSONValue.self, forKey: key) }
        self = .object(members)
    }

    public func encode(to encoder: Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .int(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .number(let value):
            var single = encoder.singleValueContainer()
            if value.isFinite { try single.encode(value) } else { try single.encodeNil() }
        case .string(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .array(let elements):
            var list = encoder.unkeyedContainer()
            for element in elements { try list.encode(element) }
        case .object(let members):
            var keyed = encoder.container(keyedBy: MemberKey.self)
            for (key, value) in members { try keyed.encode(value, forKey: MemberKey(stringValue: key)) }
        }
    }

    // MARK: Text

    /// Parses JSON text (any value, not only objects). Throws `JSONParseError` with a short reason.
    public init(parsing bytes: some Collection<UInt8>) throws(JSONParseError) {
        if let offset = Self.invalidUTF8Offset(bytes) {
            // Said plainly: Foundation would guess another encoding and report a confusing type error.
            throw JSONParseError(reason: "the text is not valid UTF-8 (at byte \(offset + 1)); send JSON as UTF-8 text")
        }
        let data = Data(bytes)
        do {
            self = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch let error as DecodingError {
            throw JSONParseError(reason: Self.reason(error))
        } catch {
            throw JSONParseError(reason: "\(error)")
        }
    }

    /// The offset of the first byte that is not valid UTF-8, nil when all of it is.
    static func invalidUTF8Offset(_ bytes: some Collection<UInt8>) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    public init(parsing text: String) throws(JSONParseError) {
        try self.init(parsing: Array(text.utf8))
    }

    private static func reason(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context):
            // The underlying error carries the position ("around line 1, column 7") where there is one.
            if let underlying = context.underlyingError as NSError?,
               let detail = underlying.userInfo[NSDebugDescriptionErrorKey] as? String {
                return detail
            }
            return context.debugDescription
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context):
            return context.debugDescription
        @unknown default:
            return "\(error)"
        }
    }

    /// Compact JSON text on one line, with object keys sorted (so output is stable). Non-finite
    /// numbers, which JSON cannot represent, are written as `null`.
    public var jsonText: String {
        var output = ""
        write(to: &output)
        return output
    }

    public var description: String { jsonText }

    /// Appends the compact JSON text of the value to `output`.
    public func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .number(let value):
            if !value.isFinite {
                output += "null"
            } else if value.rounded() == value, abs(value) < 1e15 {
                output += String(Int64(value))
            } else {
                output += "\(value)"
            }
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                element.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output += "," }
                Self.writeString(key, to: &output)
                output += ":"
                members[key]!.write(to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case "\u{2028}": output += "\\u2028"
            case "\u{2029}": output += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}

/// Why a message was not valid JSON.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { "malformed JSON: \(reason)" }
}

// MARK: Literals

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var members: [String: JSONValue] = [:]
        for (key, value) in elements { members[key] = value }
        self = .object(members)
    }
}

// MARK: Conversions

extension JSONValue {
    public init(_ value: String) { self = .string(value) }
    public init(_ value: Int) { self = .int(value) }
    public init(_ value: Double) { self = .number(value) }
    public init(_ value: Bool) { self = .bool(value) }
    public init(_ value: String?) { self = value.map(JSONValue.string) ?? .null }
    public init(_ values: [String: String]) { self = .object(values.mapValues(JSONValue.string)) }
}
