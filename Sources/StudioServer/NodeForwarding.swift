import Foundation
import StudioCore
import Control
import StudioViews
import TallyOut

/// A node camera's mode, controls and focus, asked on the switcher (`studio camera pc2/cam1 ...`, its
/// HTTP route, the console) and forwarded to the node's HTTP API (`network.srt.nodes`' `api` and
/// `token`) for its camera `cam1`: the same command's HTTP route there, one HTTP/1.0 exchange
/// (`HTTPExchange`) of at most `seconds`, on the query worker that runs the camera commands (never the
/// control thread, the media path or the cooperative pool). The node's reply comes back with the camera
/// named as the switcher names it; the node's refusal with its own code and words.
struct NodeForwarding {
    /// The whole exchange's limit (a mode change waits for the node's capture to restart its stream).
    static let seconds = 5.0
    static let connectSeconds = 2.0

    let node: SRTListenerSpec.Node
    /// The camera's name on the switcher (`pc2/cam1`) and on the node (`cam1`).
    let camera: CameraID
    let nodeCamera: CameraID
    let address: ListenAddress

    /// The forwarding of camera `name`'s commands when it is a listed node's camera (nil for any other
    /// camera): `unknown_camera` when the switcher has never seen it, `invalid_argument` naming the
    /// key to set when the node's `api` is not configured.
    static func of(_ name: String, in server: StudioServer) throws(ControlError) -> NodeForwarding? {
        let camera = CameraID(name)
        guard let spec = server.reloader.configuration.network.srt, let (node, nodeCamera) = spec.nodeCamera(camera) else { return nil }
        guard server.cameras.camera(named: camera) != nil else {
            throw ControlError(.unknownCamera, "no camera named \(name) (see `studio cameras`): node \(node.name) has not sent it")
        }
        guard let address = node.api else {
            throw ControlError(.invalidArgument, "\(name) is a camera of node \(node.name), whose HTTP API the switcher does not know: "
                               + "set api (http://HOST:PORT, the node's --http) and token (its http.token) in network.srt.nodes' entry for \(node.name)")
        }
        return NodeForwarding(node: node, camera: camera, nodeCamera: nodeCamera, address: address)
    }

    /// Asks the node `S` for its camera (`arguments` name it as the node does); the node's reply, or
    /// its refusal (`node pc2: ...` with its code), or why it could not be asked.
    func forward<S: CommandSignature>(_ signature: S.Type, _ arguments: S.Arguments) throws(ControlError) -> S.Reply {
        guard let route = S.httpRoute else { throw ControlError(.internal, "\(S.name) has no HTTP route to forward to node \(node.name)") }
        var segment = CharacterSet.urlPathAllowed
        segment.remove("/")
        let path = route.path.replacingOccurrences(of: "{camera}", with: nodeCamera.name.addingPercentEncoding(withAllowedCharacters: segment) ?? nodeCamera.name)
        let body: [UInt8]?
        do { body = route.method == "GET" ? nil : Array(try ControlCoding.encoder.encode(arguments)) } catch {
            throw ControlError(.internal, "cannot write \(S.name)'s arguments for node \(node.name): \(error)")
        }
        let json = try NodeAPI(node: node, address: address).request(route.method, path, body: body, seconds: Self.seconds,
                                                                     what: "\(S.name) for \(camera.name)")
        do { return try json.decode(S.Reply.self) } catch {
            throw ControlError(.internal, "node \(node.name)'s HTTP API at http://\(address) answered \(S.name) with what the switcher "
                               + "cannot read (\(error))")
        }
    }

    /// An event's details for a forwarded change: the node it went to, beside the change's own.
    func noted(_ details: [String: String]) -> [String: String] {
        details.merging(["node": node.name]) { _, node in node }
    }
}

/// One request to a node's HTTP API (`network.srt.nodes`' `api` and `token`): one HTTP/1.0 exchange
/// (`HTTPExchange`) of at most `seconds` (connecting at most 2 s of it), its JSON answer, or a
/// `ControlError` in words the operator can act on: `unavailable` for a node not there or a refused
/// token, `timeout` for one that does not answer, the node's own refusal with its code.
struct NodeAPI {
    let node: SRTListenerSpec.Node
    let address: ListenAddress

    var described: String { "node \(node.name)'s HTTP API at http://\(address)" }

    func get(_ path: String, seconds: Double, isCancelled: () -> Bool = { false }) throws(ControlError) -> JSONValue {
        try request("GET", path, seconds: seconds, what: path, isCancelled: isCancelled)
    }

    func request(_ method: String, _ path: String, body: [UInt8]? = nil, seconds: Double, what: String,
                 isCancelled: () -> Bool = { false }) throws(ControlError) -> JSONValue {
        let answer: HTTPExchange.Answer
        do {
            answer = try HTTPExchange.exchange(method, path, at: address, token: node.token, body: body, seconds: seconds,
                                               connectSeconds: NodeForwarding.connectSeconds, isCancelled: isCancelled)
        } catch {
            if error.timedOut {
                throw ControlError(.timeout, "\(described) did not answer \(what) within \(HTTPExchange.formatted(seconds)) s (\(error.reason))")
            }
            throw ControlError(.unavailable, "\(described) is unreachable (\(error.reason)): is the node's `studio serve` running with --http there?")
        }
        try check(status: answer.status, line: answer.statusLine, body: answer.body)
        guard let json = try? JSONValue(parsing: answer.body) else {
            throw ControlError(.internal, "\(described) answered \(what) with what is not JSON: " + String(decoding: answer.body.prefix(200), as: UTF8.self))
        }
        return json
    }

    /// A status other than 200 as the error it means (401: the token; the node's refusal with its code).
    func check(status: Int, line: String, body: [UInt8]) throws(ControlError) {
        guard status != 200 && status != 206 else { return }
        if status == 401 {
            throw ControlError(.unavailable, "\(described) refused the switcher's token (\(line)): network.srt.nodes' token for "
                               + "\(node.name) must be the node's http.token")
        }
        if let error = (try? JSONValue(parsing: body))?["error"], let code = error["code"]?.stringValue, let message = error["message"]?.stringValue {
            throw ControlError(ControlErrorCode(rawValue: code), "node \(node.name): \(message)")
        }
        throw ControlError(.unavailable, "\(described) answered \(line): \(String(decoding: body.prefix(200), as: UTF8.self))")
    }
}
