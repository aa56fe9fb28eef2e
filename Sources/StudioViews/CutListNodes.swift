import Foundation
import StudioCore
import Control
import EventStore

// The capture nodes' ISO files in a switcher's cut list (`studio export --iso`; docs/nodes.md): each node
// camera's file on a track of its own beside the program's, referenced where `studio collect` puts it
// (`NODE/FILE` beside the exported file in the session's folder), with the node's path and URL.

extension CutList {
    /// A node camera's ISO file.
    public struct NodeMedia: Sendable, Equatable {
        public var node: String
        /// As the switcher names the camera: `pc2/cam1`.
        public var camera: String
        /// The file name (`session-4-cam1.mkv`).
        public var name: String
        /// Where `studio collect` puts it, relative to the session's folder: `pc2/session-4-cam1.mkv`.
        public var collectedPath: String { node + "/" + name }
        /// The file on the node's disk.
        public var nodePath: String
        public var nodeSession: Int64
        /// The node's HTTP URL of the file (nil when the session's config gives no `api` for the node).
        public var url: String?
        /// Its first frame's place on the program's timeline (program frames): exactly (`exact`) by its time
        /// origin and first packet against the switcher's program zero, or, from a node that gave no origin,
        /// by its row's `started_at` plus the node's clock offset (to the millisecond of a database row).
        public var start: FrameCount
        /// Its first frame on the file's own timecode (its `TIMECODE` tag: the time of day of its first frame,
        /// in program-rate frames), OTIO's `available_range` start; 0 when the node gave no origin.
        public var sourceStart: FrameCount
        public var duration: FrameCount
        /// Placed to the frame by its origin (else by the wall clocks of its row, an older node).
        public var exact: Bool
        /// How it was placed, in words (the OTIO clip's `timing` metadata).
        public var timing: String {
            exact ? "placed to the frame on the switcher's time base: the file's STUDIO_ORIGIN_US + its first packet's time - the switcher's program zero"
                : "placed by the row's started_at (ms, when the node wrote it) + the node's clock offset: the node gave no time origin (an older node), not to the frame"
        }
    }
}

extension History {
    /// Session `session`'s own files' time origins by path, from their `recording_started` events (ISO
    /// files carry `origin_us` and `time_base`: their tags).
    public static func recordingOrigins(_ session: Int64, store: EventStore) throws -> [String: RecordingOrigin] {
        recordingOrigins(try store.events(matching: EventQuery(sessionID: session, kinds: [.recordingStarted])))
    }

    /// The time origins the `recording_started` events among `events` give, by path.
    static func recordingOrigins(_ events: [EventRecord]) -> [String: RecordingOrigin] {
        events.reduce(into: [:]) { origins, event in
            guard event.kind == .recordingStarted, let path = event.details["path"],
                  let origin = RecordingOrigin(startedDetails: event.details) else { return }
            origins[path] = origin
        }
    }

    /// Each node's HTTP API as the session's config snapshot gives it (`network.srt.nodes`' `api`:
    /// `http://HOST:PORT`; tokens never reach the database), by node name.
    public static func nodeAPIs(snapshot: String) -> [String: String] {
        let listed = (try? JSONValue(parsing: Array(snapshot.utf8)))?["network"]?["srt"]?["nodes"]?.arrayValue ?? []
        var apis: [String: String] = [:]
        for entry in listed {
            if let name = entry["name"]?.stringValue, let api = entry["api"]?.stringValue { apis[name] = api }
        }
        return apis
    }

    /// The node ISO files of session `session` that its history lists, placed on the program's timeline
    /// (`zero`: the switcher's wall-clock µs of program time 0; nil: at the program's start). A file whose
    /// node gave its time origin: its first packet at origin (on the switcher's time base; a `node` base
    /// plus the node's measured offset) + first packet time - zero. Else by its row's `started_at` plus the
    /// node's offset.
    static func nodeMedia(_ session: SessionRecord, store: EventStore, zero: Int64?, rate: Rational, programEnd: FrameCount,
                          timeZone: TimeZone = .current) throws -> [CutList.NodeMedia] {
        let apis = nodeAPIs(snapshot: session.configSnapshot)
        return try store.nodeSessions(sessionID: session.id).flatMap { node in
            node.recordings.filter { $0.kind == "iso" }.map { file in
                let name = (file.path as NSString).lastPathComponent
                var segment = CharacterSet.urlPathAllowed
                segment.remove("/")
                let url = apis[node.node].map { "\($0)/api/v1/sessions/\(file.nodeSession)/recordings/\(name.addingPercentEncoding(withAllowedCharacters: segment) ?? name)" }
                let offset = node.clockOffsetMicroseconds ?? 0
                let length = file.endedAt.map { Int64(($0.timeIntervalSince(file.startedAt) * 1000).rounded()) }
                var start = FrameCount(0), sourceStart = FrameCount(0)
                if let origin = file.origin {
                    // The file's time 0 on the switcher's timeline, rounded once; its first frame from there.
                    let base = origin.originMicroseconds + (origin.timeBase == "node" ? offset : 0)
                    let first = FrameCount(milliseconds: origin.firstProgramMilliseconds, rate: rate)
                    start = (zero.map { FrameCount(microseconds: base - $0, rate: rate) } ?? FrameCount(0)) + first
                    sourceStart = timecodeStart(of: origin, rate: rate, timeZone: timeZone)
                } else if let zero {
                    // The node's row time on the switcher's clock (the offset it measured against it).
                    let started = Int64((file.startedAt.timeIntervalSince1970 * 1000).rounded()) * 1000 + offset
                    start = FrameCount(microseconds: max(0, started - zero), rate: rate)
                }
                let end = length.map { start + FrameCount(milliseconds: $0, rate: rate) } ?? programEnd
                return CutList.NodeMedia(node: node.node, camera: node.node + "/" + file.camera, name: name, nodePath: file.path,
                                         nodeSession: file.nodeSession, url: url, start: start, sourceStart: sourceStart,
                                         duration: max(FrameCount(1), end - start), exact: file.origin != nil)
            }
        }
    }

    /// The time of day of an ISO file's first frame in `rate`'s frames, as its `TIMECODE` tag says it
    /// (`StudioServer.isoTimeTags`: on the file's own time base, in the local zone, which the exporting
    /// machine's must be): where its source times start.
    static func timecodeStart(of origin: RecordingOrigin, rate: Rational, timeZone: TimeZone) -> FrameCount {
        Timecode.frameOfDay(microseconds: origin.firstPacketMicroseconds, rate: rate, timeZone: timeZone)
    }

    /// The switcher's wall-clock µs of program time 0: its own ISO files' origin (`STUDIO_ORIGIN_US`, the
    /// same for all of them; `origins`, by path), else the first switch's wall time less its program time
    /// (to the ms).
    static func programZeroMicroseconds(origins: [String: RecordingOrigin], firstSwitch: EventRecord?) -> Int64? {
        if let local = origins.values.first(where: { $0.timeBase == "local" }) { return local.originMicroseconds }
        return wallTimeOfProgramZero(firstSwitch: firstSwitch).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) * 1000 }
    }
}
