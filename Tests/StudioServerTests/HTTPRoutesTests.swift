import Foundation
import Testing
import Control
import HTTPConsole
@testable import StudioServer

/// The HTTP routes come from the control commands' declarations; docs/http-api.md lists the same.
@Suite struct HTTPRoutesTests {
    static func documentedRoutes() throws -> [String] {
        try DocumentTables.firstCells(of: "docs/http-api.md", section: "Routes")
    }

    @Test func theDocumentListsEveryRouteInOrder() throws {
        let declared = (HTTPBridge.routes(ServerCommands.all) + [HTTPConsole.eventsRoute]).map { "\($0.method.rawValue) \($0.template)" }
        #expect(try Self.documentedRoutes() == declared)
        // One table: building it checks that no route is declared twice.
        _ = HTTPRouteTable(HTTPBridge.routes(ServerCommands.all))
    }

    @Test func theDocumentListsEveryTileRouteInOrder() throws {
        let documented = try DocumentTables.firstCells(of: "docs/http-api.md", section: "Pictures and the page")
        #expect(documented.filter { $0.hasPrefix("GET /api/v1/tiles") } == TileRoutes.all.map { "\($0.method.rawValue) \($0.template)" })
        // The tiles' routes and the commands' share one table: building it checks none is declared twice.
        _ = HTTPRouteTable(HTTPBridge.routes(ServerCommands.all) + TileRoutes.all + TimelineRoute.all + ConsolePage.routes + IngestDesk.all
                           + ClockRoute.all + RecordingFileRoutes.all)
        #expect((TimelineRoute.all + ClockRoute.all + RecordingFileRoutes.all).allSatisfy { documented.contains("\($0.method.rawValue) \($0.template)") })
        let text = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/http-api.md"), encoding: .utf8)
        #expect(IngestDesk.all.allSatisfy { text.contains("`\($0.method.rawValue) \($0.template)`") })
    }

    @Test func theIssuesRoutesAreServed() {
        let routes = Dictionary(uniqueKeysWithValues: HTTPBridge.routes(ServerCommands.all).map { ("\($0.method.rawValue) \($0.template)", $0.name) })
        #expect(routes["GET /api/v1/status"] == "status" && routes["GET /api/v1/cameras"] == "cameras" && routes["GET /api/v1/scenes"] == "scenes")
        #expect(routes["GET /api/v1/sessions"] == "sessions" && routes["GET /api/v1/sessions/{session:int}/events"] == "log")
        for name in ["switch", "preview", "cut", "auto", "transition"] { #expect(routes["POST /api/v1/\(name)"] == name) }
        #expect(routes["POST /api/v1/camera/{camera}/controls"] == "control" && routes["POST /api/v1/overlay/{name}"] == "overlay")
        #expect(routes["POST /api/v1/picture/{camera}"] == "picture")
    }

    @Test func everyErrorCodeTheServerSendsHasAStatus() {
        let sent: [ControlErrorCode] = [.badRequest, .unknownCommand, .invalidArgument, .tooLarge, .unknownCamera, .notFound,
                                        .unavailable, .busy, .internal]
        #expect(sent.allSatisfy { HTTPBridge.statuses[$0] != nil })
        #expect(HTTPBridge.status(of: .unknownCamera) == 404 && HTTPBridge.status(of: .invalidArgument) == 400)
    }
}
