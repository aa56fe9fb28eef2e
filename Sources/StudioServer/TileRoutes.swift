import Foundation
import Synchronization
import HTTPConsole
import LivePictures
import StudioSystem

/// The console's live pictures over HTTP (binary answers, so not control commands): a tile's newest
/// JPEG, its live stream as multipart MJPEG (`multipart/x-mixed-replace`, which an `<img>` shows as it
/// comes), and one stream of many tiles (`?tiles=program,cam1,...`, all by default), each part naming its
/// tile (`X-Tile`): the console reads that one. A tile is `program`, `preview`, a camera's or a scene's
/// name (see `TilePictures`).
enum TileRoutes {
    static let picture = HTTPRoute(.get, "/api/v1/tiles/{tile}.jpg", name: "tile_picture")
    static let stream = HTTPRoute(.get, "/api/v1/tiles/{tile}/stream", name: "tile_stream")
    static let multiplexed = HTTPRoute(.get, "/api/v1/tiles/stream", name: "tiles_stream")
    static let all = [picture, stream, multiplexed]

    /// Between a stream's parts.
    static let boundary = "studio-tile"
    /// A stream with no new picture for this long sends its newest one again, so a client that went away
    /// is noticed (and unsubscribed) even while the picture stands still.
    static let repeatAfterNanoseconds: UInt64 = 1_000_000_000

    /// The answer to a tile route; nil for another route.
    static func answer(_ call: HTTPCall, tiles: TilePictures, counts: TileRequestCounts) -> HTTPResponse? {
        guard all.contains(call.route) else { return nil }
        counts.count(call.route)
        if call.route == multiplexed {
            // Named once each, in the order asked; none named: every tile there is now.
            var names: [String] = []
            for name in (call.query["tiles"] ?? "").split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) })
            where !name.isEmpty && !names.contains(name) { names.append(name) }
            if names.isEmpty { names = tiles.tileNames }
            if let unknown = names.first(where: { !tiles.isTile($0) }) { return notFound(unknown, tiles: tiles) }
            return .streaming(contentType: "multipart/x-mixed-replace; boundary=\(boundary)", headers: [("X-Accel-Buffering", "no")],
                              TileStream(tiles: names, pictures: tiles).body)
        }
        let tile: String = if case .text(let name) = call.parameters["tile"] { name } else { "" }
        guard tiles.isTile(tile) else { return notFound(tile, tiles: tiles) }
        if call.route == stream {
            return .streaming(contentType: "multipart/x-mixed-replace; boundary=\(boundary)", headers: [("X-Accel-Buffering", "no")],
                              TileStream(tiles: [tile], pictures: tiles, namesParts: false).body)
        }
        guard let newest = tiles.latest(tile) else {
            // The tile is made from now on; its first picture is a tenth of a second away (or no frame yet).
            return .error(503, code: "unavailable", "no picture of \(tile) yet; ask again shortly", headers: [("Retry-After", "1")])
        }
        return HTTPResponse(status: 200, contentType: "image/jpeg", body: newest.jpeg, headers: headers(newest))
    }

    private static func notFound(_ tile: String, tiles: TilePictures) -> HTTPResponse {
        .error(404, code: "not_found", "no tile \"\(tile)\": the tiles are \(tiles.tileNames.joined(separator: ", "))")
    }

    /// A picture's headers. `X-Server-Time-Ns` is the server's CLOCK_MONOTONIC as the answer is made (the
    /// capture time's clock): minus `X-Capture-Time-Ns`, the picture's age when it left, which a client on
    /// another clock can read (scripts/bench-console.sh measures camera-to-tile latency with it).
    static func headers(_ picture: TilePicture, now: UInt64 = MonotonicClock.now()) -> [(String, String)] {
        [("X-Tile-Sequence", String(picture.sequence)), ("X-Capture-Time-Ns", String(picture.captureTime)),
         ("X-Server-Time-Ns", String(now))]
    }

    /// One part of a stream: its header (naming `tile` when given) and the JPEG.
    static func part(_ picture: TilePicture, tile: String? = nil) -> [UInt8] {
        let head = "--\(boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(picture.jpeg.count)\r\n"
            + (tile.map { "X-Tile: \($0)\r\n" } ?? "")
            + headers(picture).map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
        return Array(head.utf8) + picture.jpeg + [13, 10]
    }
}

/// Requests to the tile routes since the server started, by route name (`studio_http_tile_requests_total`).
final class TileRequestCounts: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    func count(_ route: HTTPRoute) { counts.withLock { $0[route.name, default: 0] += 1 } }

    /// Every tile route's count (zero for one never asked).
    var byRoute: [(route: String, count: Int)] {
        let counts = counts.withLock { $0 }
        return TileRoutes.all.map { ($0.name, counts[$0.name] ?? 0) }
    }
}

/// One client's stream of one or more tiles, on its connection's thread: subscribed to them from its
/// first part until the client goes away (or the console stops). It first sends every tile's current
/// picture, then each tile's newest one whenever there is a newer one: a slow client gets the newest,
/// never a backlog (`TilePictures.waitForAny`).
final class TileStream: @unchecked Sendable {
    // Invariant: `sent`, `lastSent`, `subscribed` are touched by the connection's thread only (MHD asks
    // one response for its content from one thread at a time; `finished` comes after the last ask).
    private let tiles: [String]
    private let pictures: TilePictures
    /// Whether each part names its tile (`X-Tile`); a one-tile stream for an `<img>` needs not.
    private let namesParts: Bool
    private var sent: [String: UInt64] = [:]
    private var lastSent: UInt64 = 0
    private var subscribed: [String] = []

    init(tiles: [String], pictures: TilePictures, namesParts: Bool = true) {
        self.tiles = tiles
        self.pictures = pictures
        self.namesParts = namesParts
    }

    var body: HTTPBodyStream {
        HTTPBodyStream(next: { [self] in next() }, finished: { [self] in finish() })
    }

    private func next() -> [UInt8]? {
        if subscribed.isEmpty {
            subscribed = tiles.filter { pictures.subscribe($0) }
            // Every tile went away since the request was checked: the stream ends.
            guard !subscribed.isEmpty else { return nil }
        }
        let now = MonotonicClock.now()
        var newer = pictures.waitForAny(subscribed, newerThan: sent, timeoutSeconds: 0.5)
        if newer.isEmpty, now &- lastSent >= TileRoutes.repeatAfterNanoseconds {
            // Nothing new for a while: the first tile's newest picture again (it also keeps the tiles requested).
            newer = subscribed.lazy.compactMap { tile in self.pictures.latest(tile).map { (tile: tile, picture: $0) } }.prefix(1).map { $0 }
        }
        guard !newer.isEmpty else { return [] }
        lastSent = MonotonicClock.now()
        var parts: [UInt8] = []
        for (tile, picture) in newer {
            sent[tile] = max(sent[tile] ?? 0, picture.sequence)
            parts += TileRoutes.part(picture, tile: namesParts ? tile : nil)
        }
        return parts
    }

    private func finish() {
        for tile in subscribed { pictures.unsubscribe(tile) }
        subscribed = []
    }
}
