import Foundation
import Synchronization
import StudioCore
import StudioConfig
import Capture
import HTTPConsole

/// Phones publishing RTMP to nginx-rtmp (`network.rtmp`): nginx asks studio whether a stream key may
/// publish (`on_publish`) and says when it stopped (`on_publish_done`), both to `/api/v1/ingest/rtmp`
/// (nginx's form: `call=publish|publish_done&name=KEY&app=...&addr=...`, in a POST body, or in the
/// query with `notify_method get;`, which is how it carries `?token=` when the API has one). A known
/// key answers 200 and its camera connects at once; an unknown one 403 (nginx then refuses the
/// publisher), logged and written to the history (`ingest_refused`, the key never). Not a control
/// command: nginx speaks this form, not JSON.
final class IngestDesk: Sendable {
    static let post = HTTPRoute(.post, "/api/v1/ingest/rtmp", name: "ingest_rtmp")
    static let get = HTTPRoute(.get, "/api/v1/ingest/rtmp", name: "ingest_rtmp")
    static let all = [post, get]

    private let settings: RTMPIngestSettings?
    private let log: ServerLog
    /// The server's cameras and events, once they exist (the HTTP API starts first): 503 before.
    private let server = Mutex<(cameras: CameraHub, events: any EventSink)?>(nil)

    init(settings: RTMPIngestSettings?, log: ServerLog) {
        self.settings = settings
        self.log = log
    }

    func attach(_ cameras: CameraHub, events: any EventSink) { server.withLock { $0 = (cameras, events) } }

    /// The answer to an ingest route; nil for another route.
    func answer(_ call: HTTPCall) -> HTTPResponse? {
        guard Self.all.contains(call.route) else { return nil }
        var form = call.query
        if call.route.method == .post { form.merge(Self.formFields(call.body)) { query, _ in query } }
        guard let settings else {
            return .error(404, code: "not_found", "this studio takes no RTMP publishers (network.rtmp is not in its config)")
        }
        guard let (hub, events) = server.withLock({ $0 }) else {
            return .error(503, code: "unavailable", "the server is starting; ask again shortly", headers: [("Retry-After", "1")])
        }
        let key = form["name"] ?? ""
        let address = form["addr"] ?? "?"
        switch form["call"] {
        case "publish":
            guard let name = settings.camera(forKey: key), let camera = hub.camera(named: name) as? NetworkPullCamera else {
                log.info("RTMP publisher from \(address) refused: an unknown stream key (app \(form["app"] ?? "?"))")
                events.emit(StudioEvent(kind: .ingestRefused, details: ["protocol": "rtmp", "address": address, "app": form["app"] ?? "",
                                                                        "reason": "unknown stream key"]))
                return .error(403, code: "forbidden", "unknown stream key")
            }
            camera.publishStarted(from: address)
            return HTTPResponse(status: 200, contentType: "text/plain", body: Array("ok \(name.name)\n".utf8))
        case "publish_done":
            if let name = settings.camera(forKey: key), let camera = hub.camera(named: name) as? NetworkPullCamera { camera.publishEnded() }
            return HTTPResponse(status: 200, contentType: "text/plain", body: Array("ok\n".utf8))
        default:
            return .error(400, code: "bad_request", "expected call=publish or call=publish_done (nginx-rtmp's on_publish and on_publish_done)")
        }
    }

    /// An `application/x-www-form-urlencoded` body's fields (`+` is a space; percent-decoded).
    static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) -> String { text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text) }
            guard let name = parts.first else { continue }
            fields[decoded(name)] = parts.count > 1 ? decoded(parts[1]) : ""
        }
        return fields
    }
}
