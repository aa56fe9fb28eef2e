import CFFmpeg
import MediaSupport
import StudioCore
import StudioSystem

/// One thing a player's reader decoded, on the play's timeline: `time` is nanoseconds from the start of
/// the play (the first item's first picture is 0; a loop's or a next item's pictures follow on from the
/// end of the one before, so there is no gap between them).
struct PlayerEntry {
    enum Content {
        case picture(VideoFrame)
        case audio([Float])
        /// The item's end (its last picture's time plus a picture's length): `how` it ended, and what
        /// follows (`loop`, `next`: the entries of the next play; `end`, `truncated`: nothing, the last
        /// picture is held, or black when `black`).
        case itemEnd(how: String, black: Bool)
    }
    var content: Content
    var time: Int64
    var item: Int
    /// Bumps at each start of an item (a loop, a next item, a cue): tells one play of an item from another.
    var play: Int
    /// The item's length where known (its container's, a still's time), for `clip_started` and the status.
    var length: Int64? = nil
    /// Where on the timeline the item's time 0 is (a play from a cue or seek starts later).
    var itemStart: Int64 = 0

    /// A sound span across `time`: its part heard from `time` on, at `time` (nil: not sound, or not across it).
    func soundHeard(from time: Int64, format: AudioFormat) -> PlayerEntry? {
        guard case .audio(let samples) = content else { return nil }
        let cut = Int((time - self.time) * Int64(format.sampleRate) / 1_000_000_000) * max(1, format.channels)
        guard cut > 0, cut < samples.count else { return nil }
        return PlayerEntry(content: .audio(Array(samples[cut...])), time: time, item: item, play: play, length: length, itemStart: itemStart)
    }
}

/// Walks a player's items as its `end` says, decoding ahead: a video file through the network cameras'
/// demuxer and decoders (`PullConnection` on a file), a still (PNG, JPEG) as one picture shown for
/// `still_seconds`. Owned and used by the player's thread alone.
final class PlayerReader {
    static let stillExtensions: Set<String> = ["png", "jpg", "jpeg"]

    let spec: PlayerSpec
    private let log: @Sendable (String) -> Void
    private var connection: PullConnection?
    private var converter = FrameConverter()
    private var pool: FramePool?
    /// The item being read, its play, where on the timeline it started, and its first media time (ns).
    private(set) var item = 0
    private(set) var play = 0
    private var base: Int64 = 0
    private var zero: Int64?
    /// The newest picture's media time, and the length of one picture (from the stream's rate).
    private var lastPicture: Int64?
    private var pictureLength: Int64 = 33_333_333
    private var pictures = 0
    /// Nothing more to read (the last item ended with hold or black, or a file broke).
    private(set) var isFinished = false
    /// The item's length, where known (the container's, or a still's time), for the status.
    private(set) var itemLength: Int64?
    /// Files that broke on air, logged once each; and those that could not seek, logged once each.
    private var reported = Set<Int>()
    private var unseekable = Set<Int>()
    /// What a seek read to find its first picture, given by the next `readMore` (and the item's end,
    /// if it came first).
    private var pending: (entries: [PlayerEntry], end: PullError?) = ([], nil)

    init(spec: PlayerSpec, log: @escaping @Sendable (String) -> Void) {
        self.spec = spec
        self.log = log
    }

    static func isStill(_ path: String) -> Bool {
        stillExtensions.contains((path.split(separator: ".").last.map(String.init) ?? "").lowercased())
    }

    /// Opens `path` as a player item: the error names the file (missing, unreadable, no video, a codec
    /// libavcodec lacks).
    static func open(_ path: String) throws(PullError) -> PullConnection {
        do {
            return try PullConnection(source: .file(path), interrupt: PullInterrupt(), audioFormat: .program)
        } catch {
            // libavformat finds no stream in an empty file (a clip written with no frames): its end.
            if error.description.hasSuffix("End of file") { throw PullError("\(path): it has no picture (0 frames, an empty file)") }
            throw PullError(error.description.contains(path) ? error.description : "\(path): \(error.description)")
        }
    }

    /// Opens `path` and decodes its first picture: the error names the file, as `open`'s, or says it has
    /// no picture (a file of 0 frames) or that its first could not be decoded (a still too large for the
    /// decoder or the size limit, damaged data).
    static func check(_ path: String) throws(PullError) {
        let connection = try open(path)
        var pictures = 0
        let count: (PullConnection.Item) -> Void = { if case .video = $0 { pictures += 1 } }
        // A picture comes within a few packets; a file that gives none in this many has none to give.
        for _ in 0..<1_000 where pictures == 0 {
            do { try connection.readAndDecode(count) } catch {
                connection.drain(count)
                guard pictures == 0 else { return }
                guard error.endOfStream else { throw PullError("\(path): its first picture cannot be decoded: \(error.description)") }
                // A still's one picture the decoder refused (it says why in the log: a size beyond its
                // limit, damaged data); a video file that ends before its first picture has none.
                throw PullError(isStill(path) ? "\(path): its picture cannot be decoded (too large, at most \(PullConnection.Limits().maximumPixels) pixels, or damaged)"
                                              : "\(path): it has no picture (0 frames)")
            }
        }
        if pictures == 0 { throw PullError("\(path): no picture in its first 1000 packets") }
    }

    /// Starts over at `index`, at time 0 of a new timeline.
    func restart(at index: Int) {
        isFinished = false
        base = 0
        start(index)
    }

    private func start(_ index: Int) {
        item = index
        play += 1
        zero = nil
        lastPicture = nil
        pictures = 0
        connection = nil
        pending = ([], nil)
        let path = spec.items[index]
        do {
            let opened = try Self.open(path)
            connection = opened
            if let rate = opened.frameRate, rate.numerator > 0 { pictureLength = Int64(1e9 * Double(rate.denominator) / Double(rate.numerator)) }
            itemLength = Self.isStill(path) ? Int64(spec.stillSeconds * 1e9) : opened.duration
        } catch {
            reportOnce("\(spec.name.name): \(error.description); holding its last good frame")
            itemLength = nil
        }
    }

    /// Moves the item just started (`restart`) to `offset` ns into it: libavformat to the video's keyframe
    /// at or before it (`PullConnection.seek`), so that `readMore` gives the entries from that keyframe
    /// on (the deck drops those before `offset`); the time taken is the decoding of one keyframe's
    /// pictures, not of the file up to there. Where the file cannot seek (libavformat refuses, the
    /// keyframe it finds is after the time even sought a few seconds earlier, or there is no picture
    /// there: a truncated file's missing part) the item is read again from its start, forward to the
    /// time, said once in the log. False then, and for a still (its one picture) or a broken file.
    @discardableResult
    func seek(to offset: Int64) -> Bool {
        let path = spec.items[item]
        guard offset > 0, !Self.isStill(path), !isFinished else { return false }
        // The item's first picture: its media time is the item's 0.
        while zero == nil, pending.end == nil, let connection {
            let (_, end) = decode(connection)
            pending.end = end
        }
        guard let zero, pending.end == nil else { return false }
        let time = base + offset
        var reason = "no picture there"
        // A keyframe found after the time (an index by decoding time, a B-frame's shift): sought again
        // earlier.
        for back: Int64 in [0, 1, 2, 4] {
            guard let connection else { break }
            do { try connection.seek(toMedia: zero + offset - back * 1_000_000_000) } catch {
                reason = error.description
                break
            }
            let found = firstPicture(connection)
            guard let first = found.time else { break }
            if first <= time + 1_000_000 {
                pending = (found.entries, found.end)
                return true
            }
            reason = "the keyframe it found is at \(first / 1_000_000) ms"
        }
        if unseekable.insert(item).inserted {
            log("warning: \(spec.name.name): \(path) cannot seek to \(offset / 1_000_000) ms (\(reason)); reading it from its start to there instead")
        }
        start(item)
        return false
    }

    /// What the connection gives up to its first picture: the entries, that picture's time, and the end
    /// if the item ended (nil time: no picture came before the end, or in 1000 packets).
    private func firstPicture(_ connection: PullConnection) -> (entries: [PlayerEntry], time: Int64?, end: PullError?) {
        var read: [PlayerEntry] = []
        for _ in 0..<1_000 {
            let (entries, end) = decode(connection)
            read += entries
            let first = read.first { if case .picture = $0.content { true } else { false } }
            if first != nil || end != nil { return (read, first?.time, end) }
        }
        return (read, nil, nil)
    }

    /// Reads and decodes one packet (or ends the item): the entries it gave, in time order.
    func readMore() -> [PlayerEntry] {
        guard !isFinished else { return [] }
        if !pending.entries.isEmpty || pending.end != nil {
            defer { pending = ([], nil) }
            return pending.entries + (pending.end.map(endOfItem) ?? [])
        }
        guard let connection else { return finish(how: "truncated") }
        let (entries, end) = decode(connection)
        return end.map { entries + endOfItem($0) } ?? entries
    }

    /// One packet's entries, and the error that ended the item if it did (the decoder drained then).
    private func decode(_ connection: PullConnection) -> (entries: [PlayerEntry], end: PullError?) {
        var entries: [PlayerEntry] = []
        let body: (PullConnection.Item) -> Void = { [self] item in
            switch item {
            case .video(let decoded, let media):
                guard !(Self.isStill(spec.items[self.item]) && pictures > 0), let frame = convert(decoded) else { return }
                if zero == nil { zero = media }
                lastPicture = max(lastPicture ?? media, media)
                pictures += 1
                entries.append(entry(.picture(frame), media: media))
            case .audio(let samples, let media):
                // The timeline's 0 is the first picture's time (an AAC track's priming may start before it).
                entries.append(entry(.audio(samples), media: media))
            case .packet: break
            }
        }
        do {
            try connection.readAndDecode(body)
        } catch {
            connection.drain(body)
            return (entries, error)
        }
        return (entries, nil)
    }

    private func entry(_ content: PlayerEntry.Content, media: Int64) -> PlayerEntry {
        PlayerEntry(content: content, time: base + max(0, media - (zero ?? media)), item: item, play: play, length: itemLength, itemStart: base)
    }

    /// The decoded picture as I420, or as yuva420p (I420 and its alpha plane, one libswscale pass) when
    /// its format has alpha (ProRes 4444, qtrle or PNG as argb/rgba, VP9 with alpha, a PNG still with
    /// transparency): a scene keys it over the layers below, the program full screen shows it over black.
    /// An item without alpha costs one look-up of its format's flags more than before.
    private func convert(_ decoded: UnsafeMutablePointer<AVFrame>) -> VideoFrame? {
        let width = Int(decoded.pointee.width), height = Int(decoded.pointee.height)
        let format: PixelFormat = hasAlpha(AVPixelFormat(rawValue: decoded.pointee.format)) ? .yuva420p : .i420
        let bytes = VideoFrame.byteCount(format: format, width: width, height: height)
        if pool?.capacity != bytes { pool = FramePool(capacity: bytes, limit: PlayerCamera.queuedPictures + 4) }
        let frame = VideoFrame.allocate(format: format, width: width, height: height, pool: pool, captureTime: 0, sequence: 0)
        return (try? converter.convert(decoded, into: frame)) != nil ? frame : nil
    }

    /// The item is over: how it ended, where, and what comes next (the next play's first entries come
    /// from the next `readMore`).
    private func endOfItem(_ error: PullError) -> [PlayerEntry] {
        let path = spec.items[item]
        let played = lastPicture.map { $0 - (zero ?? $0) + pictureLength }
        let still = Self.isStill(path)
        var truncated = !error.endOfStream || pictures == 0
        if !truncated, !still, let length = connection?.duration, let played, played + 500_000_000 < length {
            truncated = true
            reportOnce("\(spec.name.name): \(path) ended at \(played / 1_000_000) ms of its \(length / 1_000_000) ms (truncated?); holding its last frame")
        } else if truncated {
            reportOnce("\(spec.name.name): \(path): \(error.description) after \(pictures) pictures; holding its last good frame")
        }
        let length = still ? Int64(spec.stillSeconds * 1e9) : (played ?? 0)
        let end = base + max(length, pictures > 0 ? pictureLength : 0)
        connection = nil
        if truncated { return finish(how: "truncated", at: end) }
        switch spec.end {
        case .loop:
            base = end
            let marker = PlayerEntry(content: .itemEnd(how: "loop", black: false), time: end, item: item, play: play)
            start(item)
            return [marker]
        case .next where item + 1 < spec.items.count:
            base = end
            let marker = PlayerEntry(content: .itemEnd(how: "next", black: false), time: end, item: item, play: play)
            start(item + 1)
            return [marker]
        case .black:
            return finish(how: "end", at: end, black: true)
        case .hold, .next, .cutBack:
            return finish(how: "end", at: end)
        }
    }

    private func finish(how: String, at time: Int64? = nil, black: Bool = false) -> [PlayerEntry] {
        isFinished = true
        connection = nil
        return [PlayerEntry(content: .itemEnd(how: how, black: black), time: time ?? base, item: item, play: play)]
    }

    private func reportOnce(_ message: String) {
        guard reported.insert(item).inserted else { return }
        log("warning: " + message)
    }
}
