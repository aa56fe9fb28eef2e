import StudioCore

/// A `Decoder` over the YAML node tree. The config types decode themselves through it
/// (`init(from:)`); an error carries its coding path, and `ConfigError` gets the line and key path
/// from that path (`NodeLines`). A mapping decoded with `CaseIterable` coding keys refuses keys
/// that are not among them, with a "did you mean".
struct NodeDecoder: Decoder {
    let node: ConfigNode
    let codingPath: [any CodingKey]
    let lines: NodeLines
    var userInfo: [CodingUserInfoKey: Any] { [.configLines: lines] }

    func child(_ node: ConfigNode, _ key: any CodingKey) -> NodeDecoder {
        NodeDecoder(node: node, codingPath: codingPath + [key], lines: lines)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if case .mapping(let entries) = node.value {
            if let known = Key.self as? any (CodingKey & CaseIterable).Type {
                let names = knownNames(known)
                for entry in entries where !names.contains(entry.key) {
                    throw unknownKey(entry.key, known: names)
                }
            }
            return KeyedDecodingContainer(NodeKeyedContainer<Key>(decoder: self, entries: entries))
        }
        var expected = "a mapping"
        if let known = Key.self as? any (CodingKey & CaseIterable).Type {
            expected += " (with keys \(knownNames(known).joined(separator: ", ")))"
        }
        throw NodeDecodingError(codingPath, expected: expected, got: node.describedForMessage)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .sequence(let items) = node.value else {
            throw NodeDecodingError(codingPath, expected: "a sequence (a list of `- ...` items)", got: node.describedForMessage)
        }
        return NodeUnkeyedContainer(decoder: self, items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { NodeSingleValue(decoder: self) }

    private func knownNames<K: CodingKey & CaseIterable>(_ keys: K.Type) -> [String] { K.allCases.map(\.stringValue) }

    private func unknownKey(_ key: String, known: [String]) -> NodeDecodingError {
        var message = "unknown key"
        if let suggestion = known.min(by: { editDistance($0, key) < editDistance($1, key) }), editDistance(suggestion, key) <= 2 {
            message += " (did you mean \(suggestion)?)"
        }
        message += "; known keys here: \(known.joined(separator: ", "))"
        return NodeDecodingError(codingPath + [NodeKey(key)], message)
    }
}

/// A decoding error at a coding path. `got` is set for "expected X, got Y" errors about the node
/// at that path, so a caller that knows better what X is can say so (`rewording`).
struct NodeDecodingError: Error, CustomStringConvertible {
    var codingPath: [any CodingKey]
    var message: String
    var got: String?

    init(_ codingPath: [any CodingKey], _ message: String) {
        self.codingPath = codingPath
        self.message = message
    }

    init(_ codingPath: [any CodingKey], expected: String, got: String) {
        self.codingPath = codingPath
        self.message = "expected \(expected), got \(got)"
        self.got = got
    }

    /// The message alone: `ConfigError` adds the file, line and key path from the coding path.
    var description: String { message }
}

extension Decoder {
    /// Runs `body`; an "expected ..., got ..." error about this very node reads `message(got)` instead.
    func rewording<T>(_ message: (String) -> String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as NodeDecodingError where error.got != nil && error.codingPath.count == codingPath.count {
            throw NodeDecodingError(codingPath, message(error.got ?? ""))
        }
    }

    /// The node as text (a scalar), with `syntax` checking it; errors name this node's place.
    func parse<T>(_ syntax: ValueSyntax<T>) throws -> T {
        let text = try rewording({ "expected \(syntax.noun), got \($0)" }) { try singleValueContainer().decode(String.self) }
        do { return try syntax.parse(text) } catch { throw NodeDecodingError(codingPath, error.message) }
    }

    /// Runs a check of a value read earlier (a default name, a URL given as shorthand); its error
    /// is about `key` in this node.
    func check<T>(at key: any CodingKey, _ body: () throws(ValueError) -> T) throws -> T {
        do { return try body() } catch { throw failure(error.message, at: key) }
    }

    /// An error about this node, or about `key` in it.
    func failure(_ message: String, at key: (any CodingKey)? = nil) -> Error {
        NodeDecodingError(codingPath + (key.map { [$0] } ?? []), message)
    }

    /// The line of the node at `path` (nearest existing ancestor), for messages that point at another place.
    func line(at path: [any CodingKey]) -> Int {
        (userInfo[.configLines] as? NodeLines)?.line(at: path) ?? 0
    }

    /// `path` as written in the config: absolute, or relative to the config file's directory.
    func resolve(_ path: String) -> String {
        guard !path.hasPrefix("/"), let directory = (userInfo[.configLines] as? NodeLines)?.directory else { return path }
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }
}

extension KeyedDecodingContainer {
    /// The value of `key` parsed by `syntax`; nil when the key is missing or null (keep the default).
    func parse<T>(_ key: Key, _ syntax: ValueSyntax<T>) throws -> T? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        let decoder = try superDecoder(forKey: key)
        return try decoder.parse(syntax)
    }

    /// Sets `value` from `key` when it is given; a missing or null key keeps the default.
    func update<T>(_ value: inout T, _ key: Key, _ syntax: ValueSyntax<T>) throws {
        if let parsed = try parse(key, syntax) { value = parsed }
    }

    /// Sets `value` from a section under `key` when it is given.
    func update<T: Decodable>(_ value: inout T, _ key: Key) throws {
        if let decoded = try decodeIfPresent(T.self, forKey: key) { value = decoded }
    }
}

extension CodingUserInfoKey {
    static let configLines = CodingUserInfoKey(rawValue: "studio.configLines")!
}

/// Finds lines and key paths for coding paths in the tree.
struct NodeLines: Sendable {
    let root: ConfigNode
    /// The config file's directory, against which relative file paths in it (images, fonts) are
    /// resolved; nil: the working directory.
    var directory: String? = nil

    /// The line of the deepest node on `path` that exists: a key's line for a mapping entry, an
    /// item's line for a sequence item.
    func line(at path: [any CodingKey]) -> Int {
        var node = root
        var line = root.line
        for key in path {
            if let index = key.intValue, case .sequence(let items) = node.value, items.indices.contains(index) {
                node = items[index]
                line = node.line
            } else if case .mapping(let entries) = node.value, let entry = entries.first(where: { $0.key == key.stringValue }) {
                node = entry.value
                line = entry.keyLine
            } else {
                break
            }
        }
        return line
    }

    /// `outputs[1].url` for a coding path; nil for the root.
    static func keyPath(_ path: [any CodingKey]) -> String? {
        guard !path.isEmpty else { return nil }
        var text = ""
        for key in path {
            if let index = key.intValue { text += "[\(index)]" } else { text = joinKeyPath(text, key.stringValue) }
        }
        return text
    }
}

/// A key by name or index.
struct NodeKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) { stringValue = string }
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

extension ConfigNode {
    /// How a value is shown in a message. Anything that looks like a URL is masked, wherever it was
    /// written, so a stream key never reaches a log through a config error.
    var describedForMessage: String {
        if case .scalar(let text, _) = value, !isNull, text.contains("://") {
            return "\"\(SecretMasking.maskURL(text))\""
        }
        return kindDescription
    }
}

// MARK: Containers

private struct NodeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: NodeDecoder
    let entries: [ConfigEntry]
    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { entries.compactMap { Key(stringValue: $0.key) } }

    func contains(_ key: Key) -> Bool { entry(key) != nil }
    func decodeNil(forKey key: Key) throws -> Bool { entry(key)?.value.isNull ?? true }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try T(from: childDecoder(key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try NodeSingleValue(decoder: childDecoder(key)).decode(Bool.self) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try childDecoder(key).singleValueContainer().decode(String.self) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try scalar(key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try scalar(key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try scalar(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try scalar(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try scalar(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try scalar(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try scalar(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try scalar(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try scalar(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try scalar(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try scalar(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try scalar(key) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try childDecoder(key).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try childDecoder(key).unkeyedContainer() }
    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { try childDecoder(key) }

    private func entry(_ key: Key) -> ConfigEntry? { entries.first { $0.key == key.stringValue } }

    private func childDecoder(_ key: Key) throws -> NodeDecoder {
        guard let entry = entry(key) else { throw NodeDecodingError(codingPath + [key], "missing") }
        return decoder.child(entry.value, key)
    }

    private func scalar<T: LosslessStringConvertible>(_ key: Key) throws -> T { try NodeSingleValue(decoder: childDecoder(key)).scalar() }
}

private struct NodeUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: NodeDecoder
    let items: [ConfigNode]
    var currentIndex = 0
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    init(decoder: NodeDecoder, items: [ConfigNode]) {
        self.decoder = decoder
        self.items = items
    }

    private mutating func next() throws -> NodeDecoder {
        guard !isAtEnd else { throw NodeDecodingError(codingPath, "no more items") }
        defer { currentIndex += 1 }
        return decoder.child(items[currentIndex], NodeKey(intValue: currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: next()) }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try NodeSingleValue(decoder: next()).decode(Bool.self) }
    mutating func decode(_ type: String.Type) throws -> String { try NodeSingleValue(decoder: next()).decode(String.self) }
    mutating func decode(_ type: Double.Type) throws -> Double { try NodeSingleValue(decoder: next()).scalar() }
    mutating func decode(_ type: Float.Type) throws -> Float { try NodeSingleValue(decoder: next()).scalar() }
    mutating func decode(_ type: Int.Type) throws -> Int { try NodeSingleValue(decoder: next()).scalar() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try NodeSingleValue(decoder: next()).scalar() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try NodeSingleValue(decoder: next()).scalar() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try NodeSingleValue(decoder: next()).scalar() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try NodeSingleValue(decoder: next()).scalar() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try NodeSingleValue(decoder: next()).scalar() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try NodeSingleValue(decoder: next()).scalar() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try NodeSingleValue(decoder: next()).scalar() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try NodeSingleValue(decoder: next()).scalar() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try NodeSingleValue(decoder: next()).scalar() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}

private struct NodeSingleValue: SingleValueDecodingContainer {
    let decoder: NodeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.node.isNull }

    /// The scalar's text; anything else (a sequence, a mapping, null) is an "expected ..., got ..." error.
    func decode(_ type: String.Type) throws -> String {
        guard case .scalar(let text, _) = decoder.node.value, !decoder.node.isNull else {
            throw NodeDecodingError(codingPath, expected: "a string", got: decoder.node.describedForMessage)
        }
        return text
    }

    func scalar<T: LosslessStringConvertible>() throws -> T {
        let text = try decode(String.self)
        guard let value = T(text) else { throw NodeDecodingError(codingPath, "expected \(T.self), got \(quoted(text))") }
        return value
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        let text = try decode(String.self)
        do { return try ValueSyntax.boolean.parse(text) } catch { throw NodeDecodingError(codingPath, error.message) }
    }
    func decode(_ type: Double.Type) throws -> Double { try scalar() }
    func decode(_ type: Float.Type) throws -> Float { try scalar() }
    func decode(_ type: Int.Type) throws -> Int { try scalar() }
    func decode(_ type: Int8.Type) throws -> Int8 { try scalar() }
    func decode(_ type: Int16.Type) throws -> Int16 { try scalar() }
    func decode(_ type: Int32.Type) throws -> Int32 { try scalar() }
    func decode(_ type: Int64.Type) throws -> Int64 { try scalar() }
    func decode(_ type: UInt.Type) throws -> UInt { try scalar() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try scalar() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try scalar() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try scalar() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try scalar() }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: decoder) }
}

/// Levenshtein distance, for "did you mean" on misspelt keys.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}

/// Where each value of one key of a list's items was first given (camera pins' `match` and `name`, the
/// audio inputs'), to refuse a second one pointing at the first's line.
struct FirstGiven {
    private var lines: [String: Int] = [:]

    /// Notes `value` at `key` of `item`; an error `message(line of the first)` about it when an earlier item gave it.
    mutating func note(_ value: String, at key: any CodingKey, of item: any Decoder, _ message: (Int) -> String) throws {
        if let first = lines[value] { throw item.failure(message(first), at: key) }
        lines[value] = item.line(at: item.codingPath + [key])
    }
}
