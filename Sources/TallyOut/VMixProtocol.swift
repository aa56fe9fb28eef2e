import Foundation
import StudioCore

/// The subset of vMix's TCP API (port 8099) that tally lights and Tally Arbiter use, as pure functions:
/// a line in, the request it is; a board in, the reply's text. Lines end in CRLF both ways; a reply is
/// `COMMAND OK ...`, `COMMAND ER message`, or `COMMAND LENGTH` followed by that many bytes (XML).
public enum VMixProtocol {
    public enum Request: Sendable, Equatable {
        case tally
        case subscribeTally
        case unsubscribeTally
        case xml
        case function(name: String, query: [String: String])
        /// Anything else: the reply is this error line.
        case refused(reply: String)
    }

    /// What a client may ask the switcher (with `tally.vmix_functions: true`), each the CLI's command.
    public enum Action: Sendable, Equatable {
        /// `studio preview SOURCE`.
        case preview(String)
        /// `studio cut`.
        case cut
        /// `studio switch SOURCE`.
        case switchTo(String)
    }

    public static let functions = ["PreviewInput", "Cut", "CutDirect"]
    static let commands = "TALLY, SUBSCRIBE TALLY, UNSUBSCRIBE TALLY, XML, FUNCTION"

    /// A request line, without its line end. Command words in any case, as vMix takes them.
    public static func parse(_ line: String) -> Request {
        let words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
        guard let first = words.first else { return .refused(reply: "ER empty line (this server answers \(commands))") }
        let command = first.uppercased()
        switch command {
        case "TALLY" where words.count == 1: return .tally
        case "XML" where words.count == 1: return .xml
        case "SUBSCRIBE", "UNSUBSCRIBE":
            guard words.count == 2, words[1].uppercased() == "TALLY" else {
                return .refused(reply: "\(command) ER only TALLY can be subscribed to here")
            }
            return command == "SUBSCRIBE" ? .subscribeTally : .unsubscribeTally
        case "FUNCTION":
            guard words.count >= 2 else { return .refused(reply: "FUNCTION ER missing: the function's name (\(functions.joined(separator: ", ")))") }
            return .function(name: words[1], query: words.count > 2 ? query(words[2]) : [:])
        case "TALLY", "XML": return .refused(reply: "\(command) ER \(command) takes no arguments")
        default:
            return .refused(reply: "\(printable(command)) ER unknown command (this server answers \(commands))")
        }
    }

    /// The function a `FUNCTION` line asks for, its input found on `board` (by number, from 1, or by
    /// name); the error reply otherwise.
    public static func action(_ name: String, query: [String: String], board: TallyBoard) -> Result<Action, VMixRefusal> {
        func input() -> Result<String, VMixRefusal> {
            guard let given = query.first(where: { $0.key.lowercased() == "input" })?.value, !given.isEmpty else {
                return .failure(VMixRefusal("\(name) needs Input=N (a number from 1 to \(board.lamps.count), or a name)"))
            }
            if let number = Int(given) {
                guard board.lamps.indices.contains(number - 1) else {
                    return .failure(VMixRefusal("no input \(number): there are \(board.lamps.count) (see XML)"))
                }
                return .success(board.lamps[number - 1].name)
            }
            guard let lamp = board.lamp(named: given) else { return .failure(VMixRefusal("no input named \(printable(given)) (see XML)")) }
            return .success(lamp.name)
        }
        switch name.lowercased() {
        case "previewinput": return input().map(Action.preview)
        case "cut": return .success(.cut)
        case "cutdirect": return input().map(Action.switchTo)
        default: return .failure(VMixRefusal("unknown function \(printable(name)) (this server takes \(functions.joined(separator: ", ")))"))
        }
    }

    /// `TALLY OK 0121...`: one digit per input in the board's order, 0 off, 1 program, 2 preview (program
    /// wins when both).
    public static func tallyLine(_ board: TallyBoard) -> String {
        "TALLY OK " + String(board.lamps.map { $0.program ? "1" : $0.preview ? "2" : "0" })
    }

    /// The state document: inputs numbered as `tallyLine` orders them (key and title the source's name,
    /// type `Capture` for a camera and `Virtual` for a scene), then `active` and `preview` (input numbers,
    /// 0 for none).
    public static func xml(_ board: TallyBoard) -> String {
        var text = "<vmix><version>\(version)</version><edition>studio</edition><inputs>"
        for (offset, lamp) in board.lamps.enumerated() {
            let name = Markup.escaped(lamp.name)
            text += "<input key=\"\(name)\" number=\"\(offset + 1)\" type=\"\(lamp.kind == .camera ? "Capture" : "Virtual")\" "
                + "title=\"\(name)\" shortTitle=\"\(name)\" state=\"Running\">\(name)</input>"
        }
        func number(_ name: String?) -> Int { name.flatMap { name in board.lamps.firstIndex { $0.name == name } }.map { $0 + 1 } ?? 0 }
        text += "</inputs><active>\(number(board.program))</active><preview>\(number(board.preview))</preview></vmix>"
        return text
    }

    /// The version the XML says, for clients that read one: vMix's numbering, this server's own API.
    static let version = "27.0.0.0"

    /// `XML LENGTH\r\n` and the document with its line end, LENGTH counting both (as vMix's data lengths do).
    public static func xmlReply(_ board: TallyBoard) -> [UInt8] {
        let document = Array((xml(board) + "\r\n").utf8)
        return Array("XML \(document.count)\r\n".utf8) + document
    }

    /// `Input=2&Value=x`, percent- and plus-decoded.
    static func query(_ text: String) -> [String: String] {
        var items: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { decoded(String($0)) }
            if let key = parts.first, !key.isEmpty { items[key] = parts.count > 1 ? parts[1] : "" }
        }
        return items
    }

    static func decoded(_ text: String) -> String {
        let plain = text.replacingOccurrences(of: "+", with: " ")
        return plain.removingPercentEncoding ?? plain
    }

    /// Text from a client, safe to echo in one reply line: printable ASCII, at most 40 characters.
    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.prefix(40).map { (0x20...0x7E).contains($0.value) ? Character($0) : "?" })
    }
}

/// Why a function was not done, in the reply's words (`FUNCTION ER ...`).
public struct VMixRefusal: Error, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
}
