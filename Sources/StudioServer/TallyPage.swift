import Foundation
import Control
import HTTPConsole
import StudioViews
import StudioCore

/// `GET /tally/{camera}`: the talent's tally page for one camera (web/tally.html, embedded like the
/// console's files but served only here, for a camera the server has; the page reads its name from the
/// path). An unknown camera gets a 404 page naming the cameras there are. The cameras are asked of the
/// `cameras` command through the router, as the CLI asks them. The token rules are the API's (`?token=`).
enum TallyPage {
    static let fileName = "tally.html"
    static let route = HTTPRoute(.get, "/tally/{camera}", name: "tally_page")
    static let all = [route]

    /// The page's bytes, as embedded at build time.
    static let page: [UInt8] = {
        guard let file = embeddedWebFiles.first(where: { $0.name == fileName }), let bytes = Data(base64Encoded: file.base64) else {
            preconditionFailure("web/\(fileName) is not embedded")
        }
        return Array(bytes)
    }()

    /// Whether this is its call; then `respond` is called once.
    static func answer(_ call: HTTPCall, router: ControlRouter<StudioServer>, respond: @escaping @Sendable (HTTPResponse) -> Void) -> Bool {
        guard call.route == route else { return false }
        guard case .text(let camera) = call.parameters["camera"] else {
            respond(html(404, notFound(nil, cameras: [])))
            return true
        }
        router.handle(ControlRequest(id: "http", command: CameraSignatures.Cameras.name)) { reply in
            switch reply.outcome {
            case .success(let result):
                let cameras = result["cameras"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
                respond(cameras.contains(camera) ? html(200, page) : html(404, notFound(camera, cameras: cameras)))
            case .failure(let error):
                respond(.error(HTTPBridge.status(of: error.code), code: error.code.rawValue, error.message))
            }
        }
        return true
    }

    static func html(_ status: Int, _ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/html; charset=utf-8", body: body, headers: [("Cache-Control", "no-cache")])
    }

    /// A page saying which camera is not there and which are.
    static func notFound(_ camera: String?, cameras: [String]) -> [UInt8] {
        let asked = camera.map { "No camera named <b>\(Markup.escaped($0))</b> here." } ?? "No camera named."
        let known = cameras.isEmpty ? "There are no cameras now."
            : "The cameras: " + cameras.map { "<code>/tally/\(Markup.escaped($0))</code>" }.joined(separator: ", ") + "."
        return Array("""
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>no such camera</title></head>
            <body style="font-family: system-ui, sans-serif; background: #111; color: #eee; padding: 2em; font-size: 1.4em">
            <p>\(asked)</p><p data-role="cameras">\(known)</p></body></html>

            """.utf8)
    }
}
