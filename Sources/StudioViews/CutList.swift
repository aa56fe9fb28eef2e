import Foundation
import StudioCore
import EventStore
import Control

// `studio export`: the program's timeline (`program_intervals`, read through `store.programIntervals`: the
// timeline is computed there and nowhere else) as a cut list for an editor, each clip referencing the
// session's recordings. This file builds the list; CutListFormats.swift and CutListInterchange.swift write
// it in each format. docs/export.md says what each format holds and the rules below.
//
// The rule that makes the times exact: every recording file (the program's and each camera's ISO) is
// timestamped in program time (the muxer writes each packet's program pts), so the frame at program time
// T is at T in every file. A clip's source in and out are therefore its program times, in any file; a file
// that started later (an ISO of a camera plugged in mid-show, a part after a write failure) simply begins
// at its first program time (its `recording_started`'s `first_program_ms`). An ISO file's source times are
// read on its timecode (its `TIMECODE` tag; `CutList.source(_:in:)`): the same frames, moved.

/// `export`'s arguments (the CLI reads the database itself: it is not a control command).
public struct ExportArguments: Sendable, Equatable {
    public var session: Int64?
    public var format: ExportFormat
    /// Each camera's clips reference its ISO file; else every clip references the program recording.
    public var iso: Bool
    /// The timeline's timecode starts at the local time of day program time 0 was on air, not 00:00:00:00.
    public var timeOfDay: Bool

    public init(session: Int64? = nil, format: ExportFormat, iso: Bool = false, timeOfDay: Bool = false) {
        self.session = session
        self.format = format
        self.iso = iso
        self.timeOfDay = timeOfDay
    }
}

/// One session's program as clips on one video track, at the program's frame rate, in frames.
public struct CutList: Sendable, Equatable {
    public var session: Int64
    public var title: String
    public var rate: Rational
    public var width: Int
    public var height: Int
    /// Timecode of the timeline's first frame (program time 0): 0, or the time of day with `--time-of-day`.
    public var timelineStart: FrameCount
    /// The program's first and last frame (the session's program time).
    public var programStart: FrameCount
    public var programEnd: FrameCount
    public var media: [Media]
    public var clips: [Clip]
    /// Whether clips reference the ISO files (`--iso`).
    public var iso: Bool
    /// With `--iso` on a switcher: its capture nodes' ISO files, each on a track of its own (CutListNodes.swift).
    public var nodeMedia: [NodeMedia] = []

    /// A recording file a clip references.
    public struct Media: Sendable, Equatable {
        public var path: String
        /// `file://` URL of the path (made absolute against the current directory).
        public var url: String
        /// The camera it records; nil for the program recording.
        public var camera: String?
        /// Its CMX3600 reel name: at most 8 characters, A-Z and 0-9 (see `reelNames`).
        public var reel: String
        /// Its first and last frame, in program time (the file's own timestamps).
        public var start: FrameCount
        public var end: FrameCount
        /// An ISO file with a `TIMECODE` tag: what to add to a program-time frame to read it on the file's
        /// timecode (the tag's time of day of its first frame less `start`), which an editor reads the file's
        /// frames by. nil: the file has no timecode (the program recording), its source times are program times.
        public var timecodeShift: FrameCount?
        public var name: String { (path as NSString).lastPathComponent }
    }

    /// Program-time frame `frames` of `media[index]` as a source time in that file: on its timecode when it
    /// has one (OTIO's `available_range` and FCPXML's asset `start` are a file's start timecode).
    public func source(_ frames: FrameCount, in index: Int?) -> FrameCount {
        frames + (index.flatMap { media[$0].timecodeShift } ?? FrameCount(0))
    }

    /// Where `clip` starts (or, `at` given, that timeline frame of it) in its file: its program time moved
    /// by its `sourceOffset` (a node camera's, to the frame the operator saw), on the file's timecode.
    public func source(of clip: Clip, at frame: FrameCount? = nil) -> FrameCount {
        source((frame ?? clip.from) + clip.sourceOffset, in: clip.media)
    }

    /// The clips an editor's timeline gets: those with a recording and at least one frame (two boundaries
    /// within half a frame of each other, such as a loss right after a cut, make a clip of none).
    public var timelineClips: [Clip] { clips.filter { $0.media != nil && $0.to > $0.from } }

    /// The frames of `media[index]` that the clips use together with those the file holds: what an asset or
    /// a media reference declares (a camera's ISO may start a few frames after the program's first frame,
    /// and its first clip at that first frame).
    public func range(ofMedia index: Int) -> (start: FrameCount, end: FrameCount) {
        let used = timelineClips.filter { $0.media == index }
        return (min(media[index].start, used.map { $0.from + $0.sourceOffset }.min() ?? media[index].start),
                max(media[index].end + FrameCount(1), used.map { $0.to + $0.sourceOffset }.max() ?? media[index].end))
    }

    /// One interval of `program_intervals` on the track.
    public struct Clip: Sendable, Equatable {
        public var sequence: Int
        /// The camera's or scene's name, or `slate`.
        public var source: String
        public var sourceKind: String
        /// Index into `media`; nil when the session has no recording for it (only a CSV is written then).
        public var media: Int?
        /// Where it is on the program timeline (= its source in and out, in any file): `from` is where the
        /// interval starts, or with `incoming` the first frame of the transition that brought it.
        public var from: FrameCount
        public var to: FrameCount
        /// The interval's own start and end (the `switch`), and its times in ms as the database has them.
        public var intervalFrom: FrameCount
        public var fromMilliseconds: Int64
        public var toMilliseconds: Int64
        public var endedBy: String?
        /// With `endedBy` = `transition`: its kind.
        public var via: String?
        /// The transition that brings this clip in over the previous one (only with `--iso`: the program
        /// recording has its transitions in its pictures).
        public var incoming: Transition?
        /// Why this clip references the program recording although clips reference ISO files.
        public var note: String?
        /// What to add to its program times to find its frames in its file: 0, but for a capture node's
        /// camera taken from the node's own ISO file, which holds the picture shown on program at `T` at
        /// the time it was taken (`switch`'s `captured_at_us`): the hop's latency earlier.
        public var sourceOffset = FrameCount(0)
        /// A node camera's clip: when the picture it starts with was taken (µs, the switcher's clock).
        public var capturedAt: Int64?
        public var duration: FrameCount { to - from }
    }

    public struct Transition: Sendable, Equatable {
        /// `mix`, `dip`, `wipe-left`...
        public var kind: String
        public var frames: FrameCount
    }
}

extension History {
    /// The cut list of session `arguments.session` (default: the open or latest one): `not_found` without such
    /// a session; `unavailable` when nothing was on program or a clip has no recording to reference.
    public static func cutList(_ arguments: ExportArguments, store: EventStore, timeZone: TimeZone = .current) throws -> CutList {
        let session = try session(arguments.session, store: store, defaultSession: nil)
        let intervals = try store.programIntervals(sessionID: session.id)
        guard let first = intervals.first, let last = intervals.last else {
            throw ControlError(.unavailable, "nothing was on program in session \(session.id): there are no cuts to export")
        }
        let format = programFormat(snapshot: session.configSnapshot)
        let rate = format.frameRate
        func frame(_ ms: Int64) -> FrameCount { FrameCount(milliseconds: ms, rate: rate) }

        // The files, with the program times they hold (from their recording_started / recording_stopped).
        let fileEvents = try store.events(matching: EventQuery(sessionID: session.id, kinds: [.recordingStarted, .recordingStopped]))
        func programTime(_ kind: EventKind, _ key: String, _ path: String) -> Int64? {
            fileEvents.first { $0.kind == kind && $0.details["path"] == path }.flatMap { $0.details[key].flatMap { Int64($0) } }
        }
        let recordings = try store.recordings(sessionID: session.id)
        let reels = reelNames(recordings.map(\.path))
        let origins = recordingOrigins(fileEvents)
        let switches = try store.events(matching: EventQuery(sessionID: session.id, kinds: [.switchProgram]))
        var media = recordings.enumerated().map { index, recording in
            CutList.Media(path: recording.path, url: URL(fileURLWithPath: recording.path).absoluteURL.absoluteString,
                          camera: recording.camera?.name, reel: reels[index],
                          start: frame(programTime(.recordingStarted, "first_program_ms", recording.path) ?? first.fromMilliseconds),
                          end: frame(programTime(.recordingStopped, "last_program_ms", recording.path) ?? last.toMilliseconds),
                          timecodeShift: origins[recording.path].map { timecodeStart(of: $0, rate: rate, timeZone: timeZone) - frame($0.firstProgramMilliseconds) })
        }
        media.sort { ($0.camera ?? "", $0.start, $0.path) < ($1.camera ?? "", $1.start, $1.path) }
        // The file of `camera` (nil: the program) holding `from`: the last to start at or before it, else the first.
        func file(_ camera: String?, at from: FrameCount) -> Int? {
            let candidates = media.indices.filter { media[$0].camera == camera }
            return candidates.last { media[$0].start <= from } ?? candidates.first
        }

        // With --iso, a capture node's camera is taken from the node's own ISO file (full quality), at the
        // frame the operator saw: the one its `switch` says was taken at `captured_at_us`.
        let zero = arguments.iso ? programZeroMicroseconds(origins: origins, firstSwitch: switches.first) : nil
        let nodeFiles = arguments.iso ? try nodeMedia(session, store: store, zero: zero, rate: rate, programEnd: frame(last.toMilliseconds),
                                                       timeZone: timeZone) : []
        let capturedAt = !arguments.iso ? [:] : switches.reduce(into: [Int64: Int64]()) { taken, event in
            if let ms = event.programMilliseconds, let us = event.details["captured_at_us"].flatMap({ Int64($0) }) { taken[ms] = us }
        }
        var nodeFileMedia: [Int: Int] = [:]
        /// The index in `media` of the node file of `camera` holding the picture taken at `us`, added once.
        func nodeFile(_ camera: String, taken us: Int64) -> (index: Int, seen: FrameCount)? {
            guard let zero else { return nil }
            let seen = FrameCount(microseconds: us - zero, rate: rate)
            guard let found = nodeFiles.indices.first(where: { i in
                nodeFiles[i].camera == camera && nodeFiles[i].exact && nodeFiles[i].start <= seen && seen < nodeFiles[i].start + nodeFiles[i].duration
            }) else { return nil }
            if let index = nodeFileMedia[found] { return (index, seen) }
            let file = nodeFiles[found]
            media.append(CutList.Media(path: file.collectedPath, url: file.collectedPath, camera: camera, reel: "", start: file.start,
                                       end: file.start + file.duration - FrameCount(1), timecodeShift: file.sourceStart - file.start))
            nodeFileMedia[found] = media.count - 1
            return (media.count - 1, seen)
        }

        // The frames each transition showed, by the program time it ended at (its `switch`'s): the switch is
        // on the transition's last frame, so the length is not the time from `transition_started` to it.
        let transitionsShown = try store.events(matching: EventQuery(sessionID: session.id, kinds: [.transitionEnded]))
            .reduce(into: [Int64: Int64]()) { shown, event in
                if let ms = event.programMilliseconds, let frames = event.details["shown"].flatMap({ Int64($0) }), frames > 0 { shown[ms] = frames }
            }

        var clips: [CutList.Clip] = []
        for (index, interval) in intervals.enumerated() {
            let start = frame(interval.fromMilliseconds)
            var clip = CutList.Clip(sequence: interval.sequence, source: interval.source, sourceKind: interval.sourceKind, media: nil,
                                    from: start, to: frame(interval.toMilliseconds), intervalFrom: start,
                                    fromMilliseconds: interval.fromMilliseconds, toMilliseconds: interval.toMilliseconds,
                                    endedBy: interval.endedBy, via: interval.via)
            // With ISO files, a transition is the editor's: the incoming clip starts at its first frame.
            let previous = index > 0 ? intervals[index - 1] : nil
            if arguments.iso, let previous, previous.endedBy == "transition", let via = previous.via, via != "cut",
               let began = previous.transitionFromMilliseconds, frame(began) < start, frame(began) > clips[index - 1].from {
                clip.from = frame(began)
                // A history without `transition_ended` (older than it): the switch is on the last frame shown.
                let shown = transitionsShown[interval.fromMilliseconds].map { FrameCount($0) } ?? start - clip.from + FrameCount(1)
                clip.incoming = CutList.Transition(kind: via, frames: shown)
                clips[index - 1].to = clip.from
            }
            var reference: Int?
            if arguments.iso {
                switch interval.sourceKind {
                case "camera":
                    let camera = interval.camera?.name ?? interval.source
                    if let taken = capturedAt[interval.fromMilliseconds], let found = nodeFile(camera, taken: taken) {
                        reference = found.index
                        clip.sourceOffset = found.seen - start
                        clip.capturedAt = taken
                    } else {
                        reference = file(camera, at: clip.from)
                    }
                    if reference == nil { clip.note = "\(interval.source) has no ISO recording: from the program recording" }
                case "scene": clip.note = "scene \(interval.source) has no single ISO: from the program recording"
                default: clip.note = "the slate (\(interval.camera?.name ?? "a camera") lost) is only in the program recording"
                }
            }
            clip.media = reference ?? file(nil, at: clip.from)
            if clip.media == nil, arguments.format != .csv {
                throw ControlError(.unavailable, "session \(session.id) has no program recording"
                    + (arguments.iso ? " for what no ISO file holds (\(clip.note ?? interval.source))" : "")
                    + "; record with --record DIR, or export --format csv for the cut list alone")
            }
            clips.append(clip)
        }
        // The session's last interval runs to the session's end, a wall-clock time taken once the outputs
        // have drained, a few frames after the program's last frame. Its clip ends with that frame (the end
        // of the program recording as it stopped normally), which every ISO file holds too: their feeds
        // stop after the switcher.
        let programEnd = recordings.filter { $0.camera == nil }.compactMap { recording in
            fileEvents.first { $0.kind == .recordingStopped && $0.details["path"] == recording.path && $0.details["reason"] == "stopped" }
                .flatMap { $0.details["last_program_ms"].flatMap { Int64($0) } }
        }.max()
        if last.endedBy == "session end", let programEnd, let index = clips.indices.last {
            clips[index].to = max(clips[index].from + FrameCount(1), min(clips[index].to, frame(programEnd) + FrameCount(1)))
        }
        var timelineStart = FrameCount(0)
        if arguments.timeOfDay, let zero = wallTimeOfProgramZero(firstSwitch: switches.first) {
            timelineStart = Timecode.frameOfDay(microseconds: Int64((zero.timeIntervalSince1970 * 1000).rounded()) * 1000, rate: rate, timeZone: timeZone)
        }
        // The node files' reel names after the switcher's own (which keep theirs).
        if !nodeFileMedia.isEmpty {
            let names = reelNames(recordings.map(\.path) + nodeFileMedia.sorted { $0.value < $1.value }.map { entry in
                // `session-4-cam1.mkv` of pc2: PC2CAM1.
                let file = nodeFiles[entry.key]
                return "session-0-" + file.node + file.name.replacingOccurrences(of: #"^session-[0-9]+-"#, with: "", options: .regularExpression)
            })
            for (offset, index) in nodeFileMedia.values.sorted().enumerated() { media[index].reel = names[recordings.count + offset] }
        }
        var list = CutList(session: session.id, title: "studio session \(session.id)", rate: rate, width: format.width, height: format.height,
                           timelineStart: timelineStart, programStart: frame(first.fromMilliseconds), programEnd: clips.last?.to ?? frame(last.toMilliseconds),
                           media: media, clips: clips, iso: arguments.iso)
        if arguments.iso {
            list.nodeMedia = try nodeMedia(session, store: store, zero: zero, rate: rate, programEnd: list.programEnd, timeZone: timeZone)
        }
        return list
    }

    /// The program format the session ran with (its config snapshot's `program`); the default for a
    /// snapshot without one.
    static func programFormat(snapshot: String) -> ProgramFormat {
        guard let data = snapshot.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let program = object["program"] as? [String: Any], let text = program["format"] as? String,
              let format = ProgramFormat(parsing: text) else { return .default }
        return format
    }

    /// The wall time of program time 0: the first switch's wall time less its program time.
    static func wallTimeOfProgramZero(firstSwitch first: EventRecord?) -> Date? {
        guard let first, let programMilliseconds = first.programMilliseconds else { return nil }
        return first.wallTime.addingTimeInterval(-Double(programMilliseconds) / 1000)
    }

    /// CMX3600 reel names for these files: the file name without `session-N-` and the extension, letters and
    /// digits only, upper case, at most 8 characters (`session-3-cam2-g1.mkv` -> `CAM2G1`,
    /// `session-3-program.mkv` -> `PROGRAM`); a name already taken ends in a number instead (`CAMERA12`,
    /// `CAMERA2`...).
    public static func reelNames(_ paths: [String]) -> [String] {
        var taken: Set<String> = []
        return paths.map { path in
            var stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
            if let range = stem.range(of: #"^session-[0-9]+-"#, options: .regularExpression) { stem.removeSubrange(range) }
            var base = String(stem.uppercased().filter { ("A"..."Z").contains($0) || ("0"..."9").contains($0) }.prefix(8))
            if base.isEmpty { base = "REEL" }
            var name = base
            var number = 2
            while taken.contains(name) {
                let suffix = String(number)
                name = String(base.prefix(8 - suffix.count)) + suffix
                number += 1
            }
            taken.insert(name)
            return name
        }
    }
}
