import Foundation
import Testing
import Capture
import FrameDrawing
import LivePictures
import StudioConfig
import StudioCore
import StudioSystem
import TestSupport
@testable import StudioServer

/// The console's pictures and page over HTTP, from a real server in this process (so the tiles'
/// subscriptions can be counted): a tile's JPEG shows its camera, the MJPEG stream delivers new
/// pictures and unsubscribes when its client goes away, the page is served with its hooks.
@Suite(.serialized) struct ConsoleHTTPTests {
    static let token = "console-test-token-0123456789"

    final class Rig {
        let directory: URL
        let server: StudioServer
        let port: Int

        init(cameras: Int = 2, scenes: [SceneDescription] = []) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-console-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var configuration = StudioConfiguration()
            configuration.http.listen = ListenAddress(host: "127.0.0.1", port: 0)
            configuration.http.token = ConsoleHTTPTests.token
            configuration.scenes = scenes
            var options = ServerOptions(configuration: configuration, databasePath: directory.appendingPathComponent("studio.db").path,
                                        socketPath: directory.appendingPathComponent("studio.sock").path)
            options.testCameraCount = cameras
            options.testCameraSize = (640, 360)
            server = try StudioServer(options: options)
            port = Int(try #require(server.http).port)
        }

        deinit {
            server.shutdown()
            try? FileManager.default.removeItem(at: directory)
        }

        func get(_ path: String) throws -> HTTPTestClient.Response {
            try HTTPTestClient.fetch(port: port, "GET", path + (path.contains("?") ? "&" : "?") + "token=\(ConsoleHTTPTests.token)")
        }
    }

    static func camera(in jpeg: [UInt8], among names: [String]) throws -> String? {
        let frame = try jpeg.withUnsafeBytes { try MJPEGDecoder().decode($0) }
        return TestPatternCamera.camera(in: frame, among: names.map { CameraID($0) })?.name
    }

    @Test func aTilesJPEGShowsItsCamera() throws {
        let rig = try Rig()
        #expect(try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/tiles/cam2.jpg").status == 401, "pictures need the token too")
        let unknown = try rig.get("/api/v1/tiles/cam9.jpg")
        #expect(unknown.status == 404 && unknown.text.contains("cam1, cam2"), "\(unknown)")
        for camera in ["cam1", "cam2"] {
            var picture: HTTPTestClient.Response?
            let deadline = MonotonicClock.now() + 20_000_000_000
            var asked: (before: UInt64, after: UInt64) = (0, 0)
            while MonotonicClock.now() < deadline {
                let before = MonotonicClock.now()
                let response = try rig.get("/api/v1/tiles/\(camera).jpg")
                asked = (before, MonotonicClock.now())
                if response.status == 200 { picture = response; break }
                #expect(response.status == 503 && response.headers["retry-after"] == "1", "\(response)")
                usleep(50_000)
            }
            let answer = try #require(picture, "no picture of \(camera)")
            #expect(answer.headers["content-type"] == "image/jpeg")
            #expect(answer.headers["x-tile-sequence"].flatMap(Int.init) ?? 0 >= 1)
            // The server's clock as it answered (this process's CLOCK_MONOTONIC): within the request, and
            // after the picture's capture, so their difference is the picture's age.
            let captured = try #require(answer.headers["x-capture-time-ns"].flatMap(UInt64.init), "\(answer.headers)")
            let answered = try #require(answer.headers["x-server-time-ns"].flatMap(UInt64.init), "\(answer.headers)")
            #expect(asked.before <= answered && answered <= asked.after, "answered at \(answered), asked \(asked)")
            #expect(captured <= answered, "captured \(captured) after the answer \(answered)")
            #expect(try Self.camera(in: answer.body, among: ["cam1", "cam2"]) == camera, "the \(camera) tile")
        }
    }

    @Test func theStreamDeliversNewPicturesAndUnsubscribesWhenTheClientGoes() throws {
        let rig = try Rig()
        let tiles = rig.server.tiles
        #expect(tiles.subscriptionCount == 0)
        var client: HTTPTestClient? = try HTTPTestClient(port: rig.port)
        try client!.send(HTTPTestClient.requestBytes("GET", "/api/v1/tiles/cam2/stream?token=\(Self.token)"))
        let boundary = Array("--\(TileRoutes.boundary)\r\n".utf8)
        let raw = client!.read(seconds: 20) { Self.parts(in: Self.dechunked($0), boundary: boundary).count >= 6 }
        let head = String(decoding: raw.prefix(400), as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 200") && head.contains("multipart/x-mixed-replace; boundary=\(TileRoutes.boundary)"), "\(head)")
        let parts = Self.parts(in: Self.dechunked(raw), boundary: boundary)
        #expect(parts.count >= 6, "parts received: \(parts.count)")
        var sequences: [Int] = []
        // The last part may be cut short; the ones before are whole.
        for part in parts.dropLast() {
            let (headers, jpeg) = try #require(Self.split(part))
            #expect(headers["content-type"] == "image/jpeg")
            #expect(headers["content-length"].flatMap(Int.init) == jpeg.count)
            sequences.append(headers["x-tile-sequence"].flatMap(Int.init) ?? 0)
            #expect(try Self.camera(in: jpeg, among: ["cam1", "cam2"]) == "cam2")
        }
        // Each part a newer picture (one may repeat only when no new one came for a second).
        #expect(sequences == sequences.sorted() && Set(sequences).count >= 3 && sequences.first ?? 0 >= 1, "\(sequences)")
        #expect(tiles.subscriptionCount >= 1, "subscribed while connected")
        client = nil  // the client goes away
        #expect(waitUntil { tiles.subscriptionCount == 0 }, "still subscribed after the client went away: \(tiles.subscriptionCount)")
    }

    /// cam1 stretched over the left half, cam2 over the right.
    static let duo = SceneDescription(name: "duo", layout: nil, layers: [
        LayerDescription(source: .camera("cam1"), rect: .fraction(RelativeRect(x: 0, y: 0, width: 0.5, height: 1)), fit: .stretch),
        LayerDescription(source: .camera("cam2"), rect: .fraction(RelativeRect(x: 0.5, y: 0, width: 0.5, height: 1)), fit: .stretch),
    ])

    @Test func oneStreamCarriesManyTilesEachPartNamingItsTile() throws {
        let rig = try Rig(scenes: [Self.duo])
        let tiles = rig.server.tiles
        #expect(try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/tiles/stream?tiles=cam1").status == 401, "the stream needs the token too")
        let unknown = try rig.get("/api/v1/tiles/stream?tiles=cam1,cam9")
        #expect(unknown.status == 404 && unknown.text.contains("cam9") && unknown.text.contains("program, preview, cam1, cam2, duo"), "\(unknown)")
        let requestsBefore = rig.server.metricsText()

        var client: HTTPTestClient? = try HTTPTestClient(port: rig.port)
        try client!.send(HTTPTestClient.requestBytes("GET", "/api/v1/tiles/stream?tiles=cam1,duo,cam2&token=\(Self.token)"))
        let boundary = Array("--\(TileRoutes.boundary)\r\n".utf8)
        func named(_ raw: [UInt8]) -> [String] {
            Self.parts(in: Self.dechunked(raw), boundary: boundary).dropLast().compactMap { Self.split($0)?.0["x-tile"] }
        }
        let raw = client!.read(seconds: 20) { raw in
            let names = named(raw)
            return ["cam1", "cam2", "duo"].allSatisfy { name in names.filter { $0 == name }.count >= 3 }
        }
        let head = String(decoding: raw.prefix(400), as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.1 200") && head.contains("multipart/x-mixed-replace; boundary=\(TileRoutes.boundary)"), "\(head)")
        #expect(tiles.subscriptionCount >= 3, "subscribed to each tile while connected")
        var sequences: [String: [Int]] = [:]
        for part in Self.parts(in: Self.dechunked(raw), boundary: boundary).dropLast() {
            let (headers, jpeg) = try #require(Self.split(part))
            let tile = try #require(headers["x-tile"], "a part without X-Tile: \(headers)")
            #expect(headers["content-type"] == "image/jpeg" && headers["content-length"].flatMap(Int.init) == jpeg.count)
            let captured = try #require(headers["x-capture-time-ns"].flatMap(UInt64.init))
            let answered = try #require(headers["x-server-time-ns"].flatMap(UInt64.init))
            #expect(captured > 0 && captured <= answered)
            sequences[tile, default: []].append(headers["x-tile-sequence"].flatMap(Int.init) ?? 0)
            let frame = try jpeg.withUnsafeBytes { try MJPEGDecoder().decode($0) }
            let ids: [CameraID] = ["cam1", "cam2"]
            if tile == "duo" {
                // The scene, composed: cam1's ident block in the left half, cam2's in the right.
                let left = frame.averageColor(in: RelativeRect(x: 0.03, y: 0.3, width: 0.06, height: 0.4))
                let right = frame.averageColor(in: RelativeRect(x: 0.53, y: 0.3, width: 0.06, height: 0.4))
                #expect(left.flatMap { TestPatternCamera.camera(showing: $0, among: ids) } == "cam1", "duo's left half")
                #expect(right.flatMap { TestPatternCamera.camera(showing: $0, among: ids) } == "cam2", "duo's right half")
            } else {
                #expect(TestPatternCamera.camera(in: frame, among: ids)?.name == tile, "the \(tile) part")
            }
        }
        #expect(Set(sequences.keys) == ["cam1", "cam2", "duo"], "\(sequences.keys)")
        // Each tile's parts newer and newer (one may repeat only when no new one came for a second).
        for (tile, list) in sequences {
            #expect(list == list.sorted() && Set(list).count >= 2 && list.first ?? 0 >= 1, "\(tile): \(list)")
        }
        client = nil
        #expect(waitUntil { tiles.subscriptionCount == 0 }, "still subscribed after the client went away: \(tiles.subscriptionCount)")

        // No list: every tile, each part naming its own; counted as one request each (`/metrics`).
        client = try HTTPTestClient(port: rig.port)
        try client!.send(HTTPTestClient.requestBytes("GET", "/api/v1/tiles/stream?token=\(Self.token)"))
        let all = client!.read(seconds: 20) { raw in Set(named(raw)).isSuperset(of: ["program", "cam1", "cam2", "duo"]) }
        #expect(Set(named(all)).isSuperset(of: ["program", "cam1", "cam2", "duo"]), "\(Set(named(all)))")
        client = nil
        func streams(_ metrics: String) -> Int? {
            metrics.split(separator: "\n").first { $0.hasPrefix("studio_http_tile_requests_total{route=\"tiles_stream\"}") }
                .flatMap { $0.split(separator: " ").last }.flatMap { Int($0) }
        }
        #expect(streams(requestsBefore) == 1, "the 404 is a request too")
        #expect(streams(rig.server.metricsText()) == 3)
    }

    @Test func thePageIsServedWithItsHooks() throws {
        let rig = try Rig()
        #expect(try HTTPTestClient.fetch(port: rig.port, "GET", "/").status == 401, "the page needs the token on this listener")
        let page = try rig.get("/")
        #expect(page.status == 200 && page.headers["content-type"] == "text/html; charset=utf-8", "\(page.status) \(page.headers)")
        for hook in ["data-role=\"program\"", "data-role=\"preview\"", "data-action=\"cut\"", "data-action=\"auto\"", "console.js", "console.css"] {
            #expect(page.text.contains(hook), "the page has no \(hook)")
        }
        let script = try rig.get("/console.js")
        #expect(script.status == 200 && script.headers["content-type"] == "text/javascript; charset=utf-8")
        for hook in ["data-tally", "data-state", "/api/v1/events", "/api/v1/tiles/", "/focus"] {
            #expect(script.text.contains(hook), "console.js has no \(hook)")
        }
        let style = try rig.get("/console.css")
        #expect(style.status == 200 && style.headers["content-type"] == "text/css; charset=utf-8")
        // A browser fetches the page's script and style without the token its URL carries.
        for path in ["/console.js", "/console.css"] {
            let bare = try HTTPTestClient.fetch(port: rig.port, "GET", path)
            #expect(bare.status == 200 && bare.body == (path == "/console.js" ? script.body : style.body), "\(path) without the token: \(bare.status)")
        }
        #expect(try HTTPTestClient.fetch(port: rig.port, "GET", "/api/v1/status").status == 401, "the API still needs the token")
        // The same bytes as the repository's files: embedded at build time.
        let web = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../web")
        #expect(page.body == Array(try Data(contentsOf: web.appendingPathComponent("index.html"))))
        #expect(script.body == Array(try Data(contentsOf: web.appendingPathComponent("console.js"))))
        // The page's list of transitions is the switcher's (written in the page, mix first as its default; checked here).
        let html = String(decoding: page.body, as: UTF8.self)
        let select = html.components(separatedBy: "<select id=\"transition-kind\">").dropFirst().first?.components(separatedBy: "</select>").first ?? ""
        let offered = select.components(separatedBy: "<option>").dropFirst().compactMap { $0.components(separatedBy: "</option>").first }
        #expect(offered.count == TransitionKind.allCases.count && Set(offered) == Set(TransitionKind.allCases.map(\.rawValue)), "the console offers \(offered)")
    }

    // MARK: Helpers


    /// A chunked response's body (`Transfer-Encoding: chunked`, as a stream of unknown length is sent),
    /// as far as it arrived.
    static func dechunked(_ raw: [UInt8]) -> [UInt8] {
        guard let headEnd = (0..<max(0, raw.count - 3)).first(where: { raw[$0] == 13 && raw[$0 + 1] == 10 && raw[$0 + 2] == 13 && raw[$0 + 3] == 10 })
        else { return [] }
        var body: [UInt8] = []
        var index = headEnd + 4
        while let lineEnd = (index..<max(index, raw.count - 1)).first(where: { raw[$0] == 13 && raw[$0 + 1] == 10 }),
              let size = Int(String(decoding: raw[index..<lineEnd], as: UTF8.self), radix: 16), size > 0 {
            let start = lineEnd + 2
            body += raw[start..<min(raw.count, start + size)]
            index = start + size + 2
            if index > raw.count { break }
        }
        return body
    }

    /// The bytes after each boundary line (the response's head before the first is left out).
    static func parts(in bytes: [UInt8], boundary: [UInt8]) -> [ArraySlice<UInt8>] {
        var starts: [Int] = []
        var index = 0
        while index + boundary.count <= bytes.count {
            if bytes[index] == boundary[0], Array(bytes[index..<(index + boundary.count)]) == boundary {
                starts.append(index + boundary.count)
                index += boundary.count
            } else {
                index += 1
            }
        }
        return starts.enumerated().map { offset, start in
            let end = offset + 1 < starts.count ? starts[offset + 1] - boundary.count : bytes.count
            return bytes[start..<end]
        }
    }

    /// A part's headers (lowercased names) and its body, the trailing CRLF left out.
    static func split(_ part: ArraySlice<UInt8>) -> ([String: String], [UInt8])? {
        let bytes = Array(part)
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10 })
        else { return nil }
        var headers: [String: String] = [:]
        for line in String(decoding: bytes[..<end], as: UTF8.self).split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(bytes[(end + 4)...])
        if body.suffix(2) == [13, 10] { body.removeLast(2) }
        return (headers, body)
    }
}
