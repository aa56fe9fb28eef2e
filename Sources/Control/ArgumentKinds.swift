/// What a command's arguments are, read from its `Arguments` type itself (not written again): each key
/// it decodes and the kind of value it asks for first. A surface that has no JSON (OSC's typed numbers
/// and strings, `OSCBridge`) uses it to know which keys exist and which take a boolean, so that a
/// TouchOSC button's 1.0 can mean `true`. Found by decoding the type once with a decoder that answers
/// every question with an empty value and writes down what was asked.
public enum ArgumentKind: String, Sendable, Equatable {
    case bool, integer, number, string, other
}

extension ControlCommand {
    /// Each argument key of `Arguments` and its kind (`["source": .string, "camera": .string]`).
    public static var argumentKinds: [String: ArgumentKind] { ArgumentProbe.kinds(of: Arguments.self) }
}

enum ArgumentProbe {
    static func kinds<Arguments: Decodable>(of type: Arguments.Type) -> [String: ArgumentKind] {
        let notes = Notes()
        _ = try? Arguments(from: ProbeDecoder(notes: notes, key: nil))
        return notes.kinds
    }

    /// What the decoders were asked, by key. Used on one thread, for one probe.
    final class Notes {
        var kinds: [String: ArgumentKind] = [:]
        func note(_ key: String?, _ kind: ArgumentKind) {
            guard let key, kinds[key] == nil else { return }
            kinds[key] = kind
        }
    }

    static func kind(_ type: Any.Type) -> ArgumentKind {
        switch type {
        case is Bool.Type: .bool
        case is String.Type: .string
        case is Double.Type, is Float.Type: .number
        case is any FixedWidthInteger.Type: .integer
        default: .other
        }
    }

    struct ProbeDecoder: Decoder {
        let notes: Notes
        /// The argument being decoded (nil: the arguments object itself).
        let key: String?
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            guard key == nil else { notes.note(key, .other); throw Self.done }
            return KeyedDecodingContainer(Keyed<Key>(notes: notes))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { notes.note(key, .other); throw Self.done }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(notes: notes, key: key) }

        static var done: DecodingError { DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "probed")) }
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let notes: Notes
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        /// Asked first: the argument is there, and null (what a type that reads it its own way takes as "not
        /// given", so that the arguments after it are read too).
        func decodeNil(forKey key: Key) -> Bool {
            notes.note(key.stringValue, .other)
            return true
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let kind = ArgumentProbe.kind(type)
            if kind != .other { notes.note(key.stringValue, kind) }
            return try T(from: ProbeDecoder(notes: notes, key: key.stringValue))
        }
        /// An optional argument: its kind noted (from a probe of its own, whose failure is no matter), and none given.
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(type, key) }

        private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
            let kind = ArgumentProbe.kind(type)
            if kind != .other { notes.note(key.stringValue, kind) }
            _ = try? T(from: ProbeDecoder(notes: notes, key: key.stringValue))
            return nil
        }
        // The protocol's own versions for these would ask `decodeNil` first; these go to the one above.
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            notes.note(key.stringValue, .other)
            throw ProbeDecoder.done
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            notes.note(key.stringValue, .other)
            throw ProbeDecoder.done
        }
        func superDecoder() throws -> any Decoder { throw ProbeDecoder.done }
        func superDecoder(forKey key: Key) throws -> any Decoder { ProbeDecoder(notes: notes, key: key.stringValue) }
    }

    /// A value of one argument: notes the first kind asked for and answers an empty one.
    struct Single: SingleValueDecodingContainer {
        let notes: Notes
        let key: String?
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let kind = ArgumentProbe.kind(type)
            notes.note(key, kind)
            if kind == .other { return try T(from: ProbeDecoder(notes: notes, key: key)) }
            return try Self.empty(type)
        }

        static func empty<T>(_ type: T.Type) throws -> T {
            if let value = false as? T { return value }
            if let value = "" as? T { return value }
            if let value = 0.0 as? T { return value }
            if let value = Float(0) as? T { return value }
            if let integer = type as? any FixedWidthInteger.Type, let value = integer.zero as? T { return value }
            throw ProbeDecoder.done
        }
    }
}

private extension FixedWidthInteger {
    static var zero: Self { 0 }
}
