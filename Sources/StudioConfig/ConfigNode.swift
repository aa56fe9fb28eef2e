/// A config file error: where (file, line, key path) and what.
/// Its description reads `studio.yaml:7: video.preset: expected a string, got a sequence`.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file path (or the name given to `parse(yaml:source:)`).
    public var source: String
    /// 1-based line, when the error is about a place in the file.
    public var line: Int?
    /// Dotted key path such as `video.preset` or `outputs[1].url`, when the error is about a key.
    public var keyPath: String?
    public var message: String

    public init(source: String, line: Int? = nil, keyPath: String? = nil, message: String) {
        self.source = source
        self.line = line
        self.keyPath = keyPath
        self.message = message
    }

    public var description: String {
        var text = source
        if let line { text += ":\(line)" }
        text += ": "
        if let keyPath, !keyPath.isEmpty { text += keyPath + ": " }
        return text + message
    }
}

/// A YAML value as the config decoder sees it: scalars stay text (typed later, per key), with the
/// line each node starts on.
public struct ConfigNode: Sendable, Equatable {
    public enum Value: Sendable, Equatable {
        /// `isPlain` is false for quoted or tagged scalars: `"null"` is the string null, `null` is null.
        case scalar(String, isPlain: Bool)
        case sequence([ConfigNode])
        case mapping([ConfigEntry])
    }

    public var value: Value
    /// 1-based line where the node starts.
    public var line: Int

    public init(_ value: Value, line: Int) {
        self.value = value
        self.line = line
    }

    /// True for a plain `~`, `null`, `Null`, `NULL` or nothing at all (`key:` with no value).
    public var isNull: Bool {
        guard case .scalar(let text, isPlain: true) = value else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(text)
    }

    /// For messages: `a string "abc"`, `a sequence`, `a mapping`, `null`.
    public var kindDescription: String {
        if isNull { return "nothing (null)" }
        switch value {
        case .scalar(let text, _):
            let shown = text.count > 40 ? String(text.prefix(40)) + "..." : text
            return "\"\(shown)\""
        case .sequence: return "a sequence"
        case .mapping: return "a mapping"
        }
    }

    /// Parses YAML text into a tree with libyaml's event parser. Returns nil for a document with
    /// nothing in it (empty, only comments, or a bare `---`). Rejects aliases, duplicate keys,
    /// non-scalar keys and more than one document.
    public static func parse(yaml: String, source: String) throws(ConfigError) -> ConfigNode? {
        var builder = TreeBuilder(source: source)
        let parser = YAMLEventParser(text: yaml)
        do {
            while true {
                let event = try parser.next()
                if case .streamEnd = event { break }
                try builder.consume(event)
            }
        } catch let error as YAMLSyntaxError {
            throw ConfigError(source: source, line: error.line, message: error.message)
        } catch let error as ConfigError {
            throw error
        } catch {
            throw ConfigError(source: source, message: "\(error)")
        }
        guard let root = builder.root, !root.isNull else { return nil }
        return root
    }
}

/// One `key: value` of a mapping, in file order.
public struct ConfigEntry: Sendable, Equatable {
    public var key: String
    public var keyLine: Int
    public var value: ConfigNode

    public init(key: String, keyLine: Int, value: ConfigNode) {
        self.key = key
        self.keyLine = keyLine
        self.value = value
    }
}

/// Joins a key path: `video` + `preset` is `video.preset`.
func joinKeyPath(_ parent: String, _ key: String) -> String { parent.isEmpty ? key : parent + "." + key }

/// Builds the tree from parser events with an explicit stack (no recursion, bounded depth), keeping
/// each open collection's key path for messages.
private struct TreeBuilder {
    private enum Frame {
        case sequence(items: [ConfigNode], line: Int, path: String)
        case mapping(entries: [ConfigEntry], pendingKey: (key: String, line: Int)?, line: Int, path: String)
    }

    static let maxDepth = 64

    let source: String
    private var stack: [Frame] = []
    private var documents = 0
    private(set) var root: ConfigNode?

    init(source: String) { self.source = source }

    mutating func consume(_ event: YAMLEvent) throws(ConfigError) {
        switch event {
        case .streamStart, .streamEnd, .documentEnd:
            return
        case .documentStart(let line):
            documents += 1
            if documents > 1 {
                throw ConfigError(source: source, line: line, message: "only one YAML document is allowed (found a second `---`)")
            }
        case .alias(let name, let line):
            throw ConfigError(source: source, line: line, keyPath: nonEmpty(childPath()),
                              message: "aliases (*\(name)) are not supported; write the value out in full")
        case .scalar(let value, let isPlain, let line, _):
            try attach(ConfigNode(.scalar(value, isPlain: isPlain), line: line))
        case .sequenceStart(let line, _):
            try push(.sequence(items: [], line: line, path: childPath()), line: line)
        case .mappingStart(let line, _):
            try push(.mapping(entries: [], pendingKey: nil, line: line, path: childPath()), line: line)
        case .sequenceEnd, .mappingEnd:
            guard let frame = stack.popLast() else { return }
            switch frame {
            case .sequence(let items, let line, _):
                try attach(ConfigNode(.sequence(items), line: line))
            case .mapping(let entries, _, let line, _):
                try attach(ConfigNode(.mapping(entries), line: line))
            }
        }
    }

    /// The key path of the node that comes next.
    private func childPath() -> String {
        switch stack.last {
        case nil: return ""
        case .sequence(let items, _, let path)?: return path + "[\(items.count)]"
        case .mapping(_, let pendingKey, _, let path)?: return pendingKey.map { joinKeyPath(path, $0.key) } ?? path
        }
    }

    private func nonEmpty(_ path: String) -> String? { path.isEmpty ? nil : path }

    private mutating func push(_ frame: Frame, line: Int) throws(ConfigError) {
        if case .mapping(_, nil, _, let path)? = stack.last {
            throw ConfigError(source: source, line: line, keyPath: nonEmpty(path),
                              message: "a mapping key must be a plain value, not a sequence or mapping")
        }
        guard stack.count < Self.maxDepth else {
            throw ConfigError(source: source, line: line, message: "nesting deeper than \(Self.maxDepth) levels")
        }
        stack.append(frame)
    }

    private mutating func attach(_ node: ConfigNode) throws(ConfigError) {
        guard let top = stack.popLast() else {
            root = node
            return
        }
        switch top {
        case .sequence(var items, let line, let path):
            items.append(node)
            stack.append(.sequence(items: items, line: line, path: path))
        case .mapping(var entries, let pendingKey, let line, let path):
            if let pendingKey {
                entries.append(ConfigEntry(key: pendingKey.key, keyLine: pendingKey.line, value: node))
                stack.append(.mapping(entries: entries, pendingKey: nil, line: line, path: path))
            } else {
                guard case .scalar(let key, _) = node.value else {
                    throw ConfigError(source: source, line: node.line, keyPath: nonEmpty(path),
                                      message: "a mapping key must be a plain value, not a sequence or mapping")
                }
                if let first = entries.first(where: { $0.key == key }) {
                    throw ConfigError(source: source, line: node.line, keyPath: joinKeyPath(path, key),
                                      message: "duplicate key (first given on line \(first.keyLine))")
                }
                stack.append(.mapping(entries: entries, pendingKey: (key, node.line), line: line, path: path))
            }
        }
    }
}
