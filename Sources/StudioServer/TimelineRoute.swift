import Foundation
import Control
import HTTPConsole

/// `GET /api/v1/sessions/{session}/timeline.svg`: a session's timeline picture (TimelinePicture). An SVG
/// answer, not JSON, so not a command's route (like the tiles'); it asks the `report` command through the
/// router, so the query runs on the query thread with the same checks and errors as `report`, and draws
/// the picture from its reply.
enum TimelineRoute {
    static let route = HTTPRoute(.get, "/api/v1/sessions/{session:int}/timeline.svg", name: "timeline_svg")
    static let all = [route]

    /// Whether this is its call; then `respond` is called once, from the query thread.
    static func answer(_ call: HTTPCall, router: ControlRouter<StudioServer>, respond: @escaping @Sendable (HTTPResponse) -> Void) -> Bool {
        guard call.route == route else { return false }
        guard case .integer(let session) = call.parameters["session"] else {
            respond(.error(400, code: ControlErrorCode.invalidArgument.rawValue, "expected a session id"))
            return true
        }
        router.handle(ControlRequest(id: "http", command: ServerCommands.Report.name, arguments: ["session": .number(Double(session))])) { reply in
            switch reply.outcome {
            case .success(let result):
                do {
                    let svg = TimelinePicture.svg(try result.decode(ReportReply.self))
                    respond(HTTPResponse(status: 200, contentType: "image/svg+xml; charset=utf-8", body: Array(svg.utf8)))
                } catch {
                    respond(.error(500, code: ControlErrorCode.internal.rawValue, "cannot draw the timeline: \(error)"))
                }
            case .failure(let error):
                respond(.error(HTTPBridge.status(of: error.code), code: error.code.rawValue, error.message))
            }
        }
        return true
    }
}
