import Foundation
import HTTPConsole
import LivePictures
import StudioSystem

/// The console's live pictures over HTTP (binary answers, so not control commands): a tile's newest
/// JPEG, and its live stream as multipart MJPEG (`multipart/x-mixed-replace`, which an `<img>` shows as
/// it comes). A tile is `program`, `preview` or a camera's name (see `TilePictures`).
enum TileRoutes {
    static let picture = HTTPRoute(.get, "/api/v1/tiles/{tile}.jpg", name: "tile_picture")
    static let stream = HTTPRoute(.get, "/api/v1/tiles/{tile}/stream", name: "tile_stream")
    static let all = [picture, stream]

    /// Between a stream's parts.
    static let boundary = "studio-tile"
    /// A stream with no new picture for this long sends its newest one again, so a client that went away
    /// is noticed (and unsubscribed) even while the picture stands still.
    static let repeatAfterNanoseconds: UInt64 = 1_000_000_000

    /// The answer to a tile route; nil for another route.
    static func answer(_ call: HTTPCall, tiles: TilePictures) -> HTTPResponse? {
        guard call.route == picture || call.route == stream else { return nil }
        let tile: String = if case .text(let name) = call.parameters["tile"] { name } else { "" }
        guard tiles.isTile(tile) else {
            return .error(404, code: "not_found", "no tile \"\(tile)\": the tiles are \(tiles.tileNames.joined(separator: ", "))")
        }
        if call.route == stream {
            return .streaming(contentType: "multipart/x-mixed-replace; boundary=\(boundary)", headers: [("X-Accel-Buffering", "no")],
                              TileStream(tile: tile, tiles: tiles).body)
        }
        guard let newest = tiles.latest(tile) else {
            // The tile is made from now on; its first picture is a tenth of a second away (or no frame yet).
            return .error(503, code: "unavailable", "no picture of \(tile) yet; ask again shortly", headers: [("Retry-After", "1")])
        }
        return HTTPResponse(status: 200, contentType: "image/jpeg", body: newest.jpeg, headers: headers(newest))
    }

    /// A picture's headers. `X-Server-Time-Ns` is the server's CLOCK_MONOTONIC as the answer is made (the
    /// capture time's clock): minus `X-Capture-Time-Ns`, the picture's age when it left, which a client on
    /// another clock can read (scripts/bench-console.sh measures camera-to-tile latency with it).
    static func headers(_ picture: TilePicture, now: UInt64 = MonotonicClock.now()) -> [(String, String)] {
        [("X-Tile-Sequence", String(picture.sequence)), ("X-Capture-Time-Ns", String(picture.captureTime)),
         ("X-Server-Time-Ns", String(now))]
    }

    /// One part of the stream: its header and the JPEG.
    static func part(_ picture: TilePicture) -> [UInt8] {
        let head = "--\(boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(picture.jpeg.count)\r\n"
            + headers(picture).map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
        return Array(head.utf8) + picture.jpeg + [13, 10]
    }
}

/// One client's tile stream, on its connection's thread: subscribed from its first part until the
/// client goes away (or the console stops), each part the tile's next picture.
final class TileStream: @unchecked Sendable {
    // Invariant: `sequence`, `lastSent`, `subscribed` are touched by the connection's thread only (MHD
    // asks one response for its content from one thread at a time; `finished` comes after the last ask).
    private let tile: String
    private let tiles: TilePictures
    private var sequence: UInt64 = 0
    private var lastSent: UInt64 = 0
    private var subscribed = false

    init(tile: String, tiles: TilePictures) {
        self.tile = tile
        self.tiles = tiles
    }

    var body: HTTPBodyStream {
        HTTPBodyStream(next: { [self] in next() }, finished: { [self] in finish() })
    }

    private func next() -> [UInt8]? {
        if !subscribed {
            subscribed = tiles.subscribe(tile)
            guard subscribed else { return nil }
        }
        let now = MonotonicClock.now()
        if let picture = tiles.waitForNewer(tile, than: sequence, timeoutSeconds: 0.5) {
            sequence = picture.sequence
            lastSent = MonotonicClock.now()
            return TileRoutes.part(picture)
        }
        if now &- lastSent >= TileRoutes.repeatAfterNanoseconds, let newest = tiles.latest(tile) {
            sequence = max(sequence, newest.sequence)
            lastSent = MonotonicClock.now()
            return TileRoutes.part(newest)
        }
        return []
    }

    private func finish() {
        if subscribed { tiles.unsubscribe(tile) }
        subscribed = false
    }
}
