import CYAML

/// One libyaml parser event, copied out of C memory.
enum YAMLEvent {
    case streamStart
    case streamEnd
    case documentStart(line: Int)
    case documentEnd
    /// `isPlain`: written without quotes or a tag, so `~`/`null`/empty mean null.
    case scalar(value: String, isPlain: Bool, line: Int, column: Int)
    case sequenceStart(line: Int, column: Int)
    case sequenceEnd
    case mappingStart(line: Int, column: Int)
    case mappingEnd
    case alias(name: String, line: Int)
}

/// A libyaml syntax error, with a 1-based line.
struct YAMLSyntaxError: Error, CustomStringConvertible {
    var line: Int
    var message: String
    var description: String { "line \(line): \(message)" }
}

/// Owns one `yaml_parser_t` (and the copy of the input it reads) and hands out its events.
final class YAMLEventParser {
    private let parser: UnsafeMutablePointer<yaml_parser_t>
    private let input: UnsafeMutableBufferPointer<UInt8>
    private let lines: [Substring]
    private var finished = false

    init(text: String) {
        let bytes = Array(text.utf8)
        input = .allocate(capacity: max(bytes.count, 1))
        _ = input.initialize(from: bytes)
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        parser = .allocate(capacity: 1)
        // yaml_parser_initialize fails only when out of memory.
        precondition(yaml_parser_initialize(parser) == 1, "yaml_parser_initialize failed (out of memory)")
        yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(parser, input.baseAddress, bytes.count)
    }

    deinit {
        yaml_parser_delete(parser)
        parser.deallocate()
        input.deallocate()
    }

    /// The next event; after `.streamEnd` it keeps returning `.streamEnd`.
    func next() throws(YAMLSyntaxError) -> YAMLEvent {
        if finished { return .streamEnd }
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) == 1 else { throw syntaxError() }
        defer { yaml_event_delete(&event) }
        let line = Int(event.start_mark.line) + 1
        let column = Int(event.start_mark.column) + 1
        switch event.type {
        case YAML_STREAM_START_EVENT:
            return .streamStart
        case YAML_STREAM_END_EVENT:
            finished = true
            return .streamEnd
        case YAML_DOCUMENT_START_EVENT:
            return .documentStart(line: line)
        case YAML_DOCUMENT_END_EVENT:
            return .documentEnd
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let value = scalar.value.map {
                String(decoding: UnsafeBufferPointer(start: $0, count: Int(scalar.length)), as: UTF8.self)
            } ?? ""
            let isPlain = scalar.style == YAML_PLAIN_SCALAR_STYLE && scalar.tag == nil
            return .scalar(value: value, isPlain: isPlain, line: line, column: column)
        case YAML_SEQUENCE_START_EVENT:
            return .sequenceStart(line: line, column: column)
        case YAML_SEQUENCE_END_EVENT:
            return .sequenceEnd
        case YAML_MAPPING_START_EVENT:
            return .mappingStart(line: line, column: column)
        case YAML_MAPPING_END_EVENT:
            return .mappingEnd
        case YAML_ALIAS_EVENT:
            let name = event.data.alias.anchor.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) } ?? ""
            return .alias(name: name, line: line)
        default:
            throw YAMLSyntaxError(line: line, message: "unexpected YAML event \(event.type.rawValue)")
        }
    }

    private func syntaxError() -> YAMLSyntaxError {
        let problem = parser.pointee.problem.map { String(cString: $0) } ?? "cannot parse"
        let mark = parser.pointee.problem_mark
        var line = Int(mark.line) + 1
        var message = "invalid YAML: \(problem)"
        if parser.pointee.error == YAML_READER_ERROR {
            // The reader (bad bytes, control characters) gives a byte offset, not a mark: count the lines to it.
            let offset = min(Int(parser.pointee.problem_offset), input.count)
            line = 1 + input.prefix(offset).lazy.filter { $0 == UInt8(ascii: "\n") }.count
            let value = parser.pointee.problem_value
            if value == 0, problem.contains("control characters") {
                message = "invalid YAML: a NUL byte (a config is text: it cannot hold one)"
            } else if value >= 0, problem.contains("control characters") {
                message += String(format: " (the byte 0x%02X)", Int(value))
            }
        }
        if let context = parser.pointee.context.map({ String(cString: $0) }) {
            message += " (\(context) at line \(Int(parser.pointee.context_mark.line) + 1))"
        }
        if lines.indices.contains(line - 1), lines[line - 1].contains("\t") {
            message += "; YAML cannot be indented with tabs, use spaces"
        }
        if lines.indices.contains(line - 1), lines[line - 1].contains("]:"), lines[line - 1].contains("[") {
            // `listen: [::1]:8080` unquoted: YAML starts a list at `[`.
            message += "; quote an IPv6 address with its port, listen: \"[::1]:8080\""
        }
        return YAMLSyntaxError(line: line, message: message)
    }
}
