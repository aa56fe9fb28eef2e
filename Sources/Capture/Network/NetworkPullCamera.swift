import CFFmpeg
import Synchronization
import StudioCore
import StudioSystem
import MediaSupport

/// A camera pulled from a URL (`network.pull`): an IP camera on RTSP, a stream on an RTMP server, an SRT
/// listener, HLS, MPEG-TS over UDP. Two threads of its own: `net.NAME` connects, reads and decodes
/// (blocking in libavformat, broken by `PullInterrupt` on stop or after `readTimeout` of silence), and
/// `net.NAME.out` hands pictures and sound out on time (`PullPlayout`) after the jitter buffer's target
/// (`NetworkPull.latency`). Its sound is its `TimedAudioInput` (drift-corrected into the mixer as an
/// input named like the camera).
///
/// A phone's stream on an RTMP server (`NetworkPull.waitsForPublisher`) is pulled only while its
/// publisher is there: `publishStarted` (the server's `on_publish`, accepted) connects at once,
/// `publishEnded` (`on_publish_done`) hangs up, and it waits for the next publish without retrying.
///
/// A connection that fails or ends is tried again with a backoff (0.5 s doubling to `maximumBackoff`);
/// the attempts, the last error and the next try are in `pullStatus`. A new connection starts with
/// fresh timing and an empty buffer: nothing stale is shown. While it is away no picture comes, so the
/// server's silence watch marks it lost (the backup or the slate on program) and back when pictures
/// come again, as for any camera.
///
/// Its video is decoded as `decoding` says (VAAPI or libavcodec's threads) and as its `demand` needs:
/// while nobody sees it (not on program or preview, in no scene or transition there, not recorded by an
/// encoded ISO) only its reference pictures are decoded; every picture from the next packet on once it
/// is seen (`PullVideoDecoder`).
public final class NetworkPullCamera: Camera {
    public let id: CameraID
    public let backend: BackendName = .network
    public let identity: String
    public let displayName: String
    public let frames = LatestValue<VideoFrame>()
    /// Its compressed packets (pictures and sound) as they arrived, for an ISO that copies them (`CompressedFrameSource`).
    public let compressedFrames = CompressedFrameTap()
    /// How often the newest picture is handed out again while the stream is alive but no new one is due
    /// (a frame sync): a publisher at 1 fps stays on the program's picture, not on the slate.
    public static let repeatInterval: UInt64 = 200_000_000
    /// The least a stream may be silent before it counts as gone (the server's loss timeout, 0.5 s).
    public static let minimumAllowance: UInt64 = 500_000_000
    public let pull: NetworkPull
    /// How its video is decoded (the server's choice for every network camera).
    public let decoding: NetworkDecoding
    private let decodeDemand: CameraDemand
    public var demand: CameraDemand? { decodeDemand }
    /// The source's sound, on its own clock.
    public let sound: TimedAudioInput
    public var audio: (any ClockedAudioInput)? { sound }
    /// Its playout thread, which publishes the pictures (`net.camN` receives them).
    public var threadName: String { "net.\(id.name).out" }
    /// The longest wait between two tries.
    public static let maximumBackoff = 10.0
    /// A connection that delivers nothing for this long is given up (and tried again).
    public static let readTimeout = 5.0
    /// How long opening may take (RTSP's handshake, probing the streams).
    public static let openTimeout = 10.0

    private struct Shared: Sendable {
        var state = CameraState.stopped
        var statistics = CaptureStatistics()
        var format: CameraFormat?
        var status: NetworkSourceStatus
        /// CLOCK_MONOTONIC ns of the next try while disconnected, and of the newest packet.
        var nextTry: UInt64?
        var lastPacket: UInt64?
        /// Bytes read by the connection, and when the bit rate was last taken.
        var rateMark: (bytes: UInt64, at: UInt64) = (0, 0)
        /// The longest gap between two packets in this window and the last (a publisher at 1 fps, or one
        /// whose muxer sends in bursts, has long ones), and when the window started.
        var gaps: (current: UInt64, previous: UInt64, since: UInt64) = (0, 0, 0)
        /// The picture shown last and when it was handed out (again).
        var shownAt: UInt64 = 0
        var repeated: UInt64 = 0
        /// The video codec of the newest connection (nil before one, or a codec an ISO cannot copy: `copyable`).
        var codec: (name: CompressedCodec?, known: Bool) = (nil, false)
        /// An SRT caller's connection (`arrivesOnListener`), and whether it is new (not read yet).
        var caller: SRTConnection?
        var callerIsNew = false
    }

    private let shared: Mutex<Shared>
    private let receiver = WorkerThread()
    private let player = WorkerThread()
    private let interrupt: PullInterrupt
    private let playout = PullPlayout()
    /// Wakes the receive thread from its backoff on stop.
    private let backoff = ConditionLock()
    private let clock: any Clock
    private let log: @Sendable (String) -> Void

    /// - Parameter id: the name the server's namer gives it (the entry's `name`, unless a scene took it).
    public init(pull: NetworkPull, id: CameraID, decoding: NetworkDecoding = NetworkDecoding(), log: @escaping @Sendable (String) -> Void,
                clock: any Clock = .monotonic) {
        self.pull = pull
        self.decoding = decoding
        // Every picture it publishes is whole and at full size (skipping spares only pictures nothing
        // is predicted from), so its newest is good for a cut the moment it is needed in full: a take
        // never waits for the next one (`CameraDemand.hasFullPicture`). The receive thread decodes every
        // picture from its next packet on.
        let rise = DemandRise()
        let demand = CameraDemand(wake: { rise.noteFullPicture() })
        rise.demand.withLock { $0.demand = demand }
        decodeDemand = demand
        self.id = id
        identity = pull.identity
        displayName = SecretMasking.maskURL(pull.url)
        sound = TimedAudioInput(displayName)
        self.clock = clock
        interrupt = PullInterrupt(clock: clock)
        self.log = log
        var status = NetworkSourceStatus(protocol: pull.kind?.name ?? "?", remote: displayName, targetMilliseconds: pull.latency)
        if pull.waitsForPublisher { status.publishing = false }
        shared = Mutex(Shared(status: status))
    }

    // MARK: A phone's publisher (RTMP server callbacks)

    /// Its publisher started (the RTMP server asked, the key is this camera's): connect now.
    public func publishStarted(from address: String) {
        shared.withLock { $0.status.publishing = true }
        log("\(id.name): its publisher started (\(address))")
        backoff.withLock { backoff.broadcast() }
    }

    /// Its publisher went away: hang up and wait for the next one.
    public func publishEnded() {
        let was = shared.withLock { status -> Bool in
            defer { status.status.publishing = false }
            return status.status.publishing == true
        }
        if was { log("\(id.name): its publisher stopped") }
        interrupt.hangUp()
        backoff.withLock { backoff.broadcast() }
    }

    private var isPublishing: Bool { shared.withLock { $0.status.publishing ?? true } }

    /// Its SRT caller connected (the listener accepted it): read it now. A caller that comes back
    /// replaces its previous connection at once (closed, so a read of it ends).
    func publishStarted(srt connection: SRTConnection, from address: String) {
        let previous = shared.withLock { shared -> SRTConnection? in
            defer {
                shared.caller = connection
                shared.callerIsNew = true
                shared.status.publishing = true
            }
            return shared.caller
        }
        log("\(id.name): its SRT caller connected (\(address))\(previous == nil ? "" : ", in place of its previous connection")")
        if let previous {
            previous.close()
            interrupt.hangUp()
        }
        backoff.withLock { backoff.broadcast() }
    }

    /// The source to open now: the URL, or the newest SRT caller's connection (nil: none waiting).
    private func nextSource(_ kind: PullKind) -> PullConnection.Source? {
        guard pull.arrivesOnListener else { return .url(pull.url, kind) }
        return shared.withLock { shared in
            guard shared.callerIsNew, let caller = shared.caller else { return nil }
            shared.callerIsNew = false
            return .srt(caller)
        }
    }

    deinit {
        interrupt.stop()
        playout.stop()
        receiver.requestStop()
        player.requestStop()
    }

    public var state: CameraState { shared.withLock { $0.state } }
    public var currentFormat: CameraFormat? { shared.withLock { $0.format } }
    public var statistics: CaptureStatistics { shared.withLock { $0.statistics } }
    public var network: NetworkSourceStatus? {
        let now = clock.now()
        let counters = playout.counters
        return shared.withLock { shared in
            var status = shared.status
            status.nextTryMilliseconds = shared.nextTry.map { $0 > now ? Int(($0 - now) / 1_000_000) : 0 }
            status.lastPacketAgeMilliseconds = shared.lastPacket.map { now > $0 ? Int((now - $0) / 1_000_000) : 0 }
            status.picturesShown = Int(counters.shown)
            status.picturesRepeated = Int(shared.repeated)
            status.picturesDropped += Int(counters.dropped + counters.overflowed)
            return status
        }
    }

    public func start() {
        interrupt.resume()
        playout.restart()
        player.start(name: threadName) { [self] in
            playout.run(clock: clock, picture: { [self] frame, releasedAt in
                var frame = frame
                frame.arrivalTime = releasedAt
                frames.publish(frame)
                decodeDemand.noteFullPicture()
                shared.withLock {
                    $0.statistics.framesCaptured += 1
                    $0.statistics.lastFrameTime = releasedAt
                    $0.shownAt = releasedAt
                    $0.state = .live
                }
            }, audio: { [self] samples, releasedAt in
                sound.push(samples, capturedAt: releasedAt)
            }, tick: { [self] now in repeatPicture(now: now) })
        }
        receiver.start(name: "net.\(id.name)", prepare: { shared.withLock { $0.state = .starting } }) { [self] in receive() }
    }

    /// The frame sync: while the connection is up and its packets keep coming (no longer apart than
    /// 1.5 times the longest recent gap, at least `minimumAllowance`, at most 5 s), the newest picture
    /// is handed out again every `repeatInterval` when no new one came, counted as repeated.
    private func repeatPicture(now: UInt64) {
        let due = shared.withLock { shared -> Bool in
            guard shared.status.connected, let last = shared.lastPacket, now >= shared.shownAt + Self.repeatInterval, shared.shownAt != 0 else {
                return false
            }
            let allowance = min(5_000_000_000, max(Self.minimumAllowance, max(shared.gaps.current, shared.gaps.previous) * 3 / 2))
            guard now <= last + allowance else { return false }
            shared.shownAt = now
            shared.repeated += 1
            shared.statistics.lastFrameTime = now
            return true
        }
        guard due, var frame = frames.latest().value else { return }
        frame.arrivalTime = now
        frames.publish(frame)
    }

    /// Notes a packet's arrival (any stream's): its gap since the previous one, for the frame sync.
    private func notePacket(at now: UInt64) {
        shared.withLock { shared in
            if let last = shared.lastPacket, now > last { shared.gaps.current = max(shared.gaps.current, now - last) }
            if now - shared.gaps.since >= 10_000_000_000 { shared.gaps = (0, shared.gaps.current, now) }
            shared.lastPacket = now
        }
    }

    public func stop() {
        interrupt.stop()
        receiver.requestStop()
        backoff.withLock { backoff.broadcast() }
        receiver.stop()
        playout.stop()
        player.stop()
        sound.disconnected()
        shared.withLock { $0.state = .stopped }
    }

    // MARK: The receive thread

    /// Video packets refused in a row, with no picture between, after which the status says the video
    /// cannot be decoded (two seconds of 30 fps; a stream joined between keyframes refuses fewer).
    static let refusalsToReport = 60

    private func receive() {
        guard let kind = pull.kind else { return }
        var timeline = PullTimeline(targetMilliseconds: pull.latency)
        var failures = 0
        var lastMessage = ""
        var pool: FramePool?
        var converter = FrameConverter()
        /// Connections made: with the timeline's re-bases, the epoch of the ISO copy's mapping.
        var connections = 0
        while !receiver.isStopRequested {
            if pull.waitsForPublisher {
                backoff.withLock {
                    while !receiver.isStopRequested, !isPublishing { _ = backoff.wait(untilMonotonic: clock.now() + 100_000_000) }
                }
                guard !receiver.isStopRequested else { break }
            }
            interrupt.answer()
            guard let source = nextSource(kind) else {
                // The listener's caller that woke us was replaced or gone already: wait for the next.
                shared.withLock { $0.status.publishing = false }
                continue
            }
            shared.withLock {
                $0.status.attempts += 1
                $0.nextTry = nil
            }
            interrupt.arm(seconds: Self.openTimeout)
            do {
                let connection = try PullConnection(source: source, interrupt: interrupt, audioFormat: sound.format, decoding: decoding)
                var skipped = 0
                connection.skipsNonReference = decodeDemand.demand != .full
                failures = 0
                lastMessage = ""
                timeline.reset()
                connections += 1
                playout.flush()
                converter = FrameConverter()
                sound.newStream()
                sound.connected(displayName)
                shared.withLock {
                    $0.status.connected = true
                    $0.status.lastError = nil
                    $0.status.streams = connection.streamSummary
                    $0.codec = (connection.copyableCodec, true)
                    $0.status.decoder = connection.decoderStatus
                    $0.rateMark = (0, clock.now())
                    // Fresh timing: nothing of the previous connection is repeated.
                    $0.shownAt = 0
                    $0.gaps = (0, 0, clock.now())
                }
                let decoder = connection.decoderStatus
                log("\(id.name): connected to \(displayName): \(connection.streamSummary); \(decoder.map(\.summary) ?? "")"
                    + (decoder?.softwareReason.map { " (software: \($0))" } ?? ""))
                let frameSlack: UInt64 = 40_000_000
                while !receiver.isStopRequested {
                    interrupt.arm(seconds: Self.readTimeout)
                    connection.skipsNonReference = decodeDemand.demand != .full
                    try connection.readAndDecode { item in
                        let now = clock.now()
                        notePacket(at: now)
                        switch item {
                        case .video(let decoded, let media):
                            let due = timeline.due(media: media, arrival: now)
                            shared.withLock {
                                $0.status.picturesIn += 1
                                $0.statistics.framesDecodedFull += 1
                                $0.status.bufferMilliseconds = max(0, Int(timeline.depth / 1_000_000))
                                $0.status.driftPPM = timeline.driftPPM
                                $0.status.rebases = timeline.rebases
                            }
                            // Already late (a burst of old pictures at connect): decoded for its
                            // successors, never shown.
                            guard due + frameSlack >= now else {
                                shared.withLock { $0.status.picturesDropped += 1 }
                                return
                            }
                            let width = Int(decoded.pointee.width), height = Int(decoded.pointee.height)
                            let bytes = VideoFrame.byteCount(format: .i420, width: width, height: height)
                            if pool?.capacity != bytes { pool = FramePool(capacity: bytes, limit: playout.maximumPictures / 4) }
                            let frame = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool, captureTime: now,
                                                            sequence: UInt64(shared.withLock { $0.status.picturesIn }))
                            guard (try? converter.convert(decoded, into: frame)) != nil else { return }
                            noteFormat(width: width, height: height, rate: connection.frameRate)
                            playout.add(.picture(frame), due: due)
                        case .packet(let packet):
                            // Its sound only beside pictures that are copied (else its ISO encodes, with no own track).
                            guard let codec = packet.codec, packet.pts != .min, !codec.isAudio || connection.copyableCodec != nil else { return }
                            compressedFrames.offer {
                                let offset = timeline.mapping(media: packet.pts, arrival: now)
                                return packet.compressedFrame(codec: codec, arrival: now, offset: offset, epoch: connections &+ timeline.rebases)
                            }
                        case .audio(let samples, let media):
                            playout.add(.audio(samples), due: timeline.due(media: media, arrival: now))
                        }
                    }
                    let bytes = connection.bytesRead, now = clock.now(), refused = connection.videoRefused
                    if refused.inARow == Self.refusalsToReport {
                        log("warning: \(id.name): its video cannot be decoded (\(refused.reason)); a broken codec configuration or a damaged stream; waiting for a picture")
                    }
                    let skippedNow = connection.videoPacketsSkipped, decoderNow = connection.decoderStatus
                    defer { skipped = skippedNow }
                    shared.withLock {
                        $0.statistics.framesNotDecoded += UInt64(max(0, skippedNow - skipped))
                        $0.status.decoder = decoderNow
                        $0.status.packetsUndecodable = refused.total
                        $0.status.lastError = refused.inARow >= Self.refusalsToReport
                            ? "its video cannot be decoded (\(refused.inARow) packets in a row refused: \(refused.reason)): "
                                + "a broken codec configuration or a damaged stream"
                            : nil
                        if now - $0.rateMark.at >= 1_000_000_000 {
                            if case .srt(let caller) = source { $0.status.srt = caller.statistics }
                            let elapsed = Double(now - $0.rateMark.at) / 1e9
                            $0.status.bitRate = Int(Double(bytes &- $0.rateMark.bytes) * 8 / elapsed)
                            $0.rateMark = (bytes, now)
                        }
                    }
                }
            } catch {
                let replaced = shared.withLock { $0.callerIsNew }
                if pull.arrivesOnListener {
                    if !receiver.isStopRequested, !replaced { log("\(id.name): its SRT caller's stream is over (\(error.description)); waiting for it") }
                } else if !receiver.isStopRequested, isPublishing, error.description != lastMessage {
                    log("\(id.name): \(error.description); trying again")
                    lastMessage = error.description
                }
                shared.withLock { $0.status.lastError = error.description }
            }
            sound.disconnected()
            shared.withLock {
                $0.status.connected = false
                if $0.state == .live { $0.state = .lost }
            }
            guard !receiver.isStopRequested else { break }
            // A phone that stopped publishing is waited for, not tried again; so is an SRT caller that
            // went away (a new one may be waiting already).
            if pull.arrivesOnListener {
                shared.withLock { shared in
                    if !shared.callerIsNew {
                        shared.caller?.close()
                        shared.caller = nil
                        shared.status.publishing = false
                    }
                }
                continue
            }
            if !isPublishing { continue }
            failures += 1
            let wait = min(Self.maximumBackoff, 0.5 * Double(1 << min(failures - 1, 10)))
            let next = clock.now() + UInt64(wait * 1e9)
            shared.withLock { $0.nextTry = next }
            backoff.withLock {
                while !receiver.isStopRequested, clock.now() < next, isPublishing {
                    _ = backoff.wait(untilMonotonic: min(next, clock.now() + 100_000_000))
                }
            }
        }
    }

    /// The codec its ISO copies (`CompressedFrameSource`): the newest connection's, H.264 before the first.
    public var compressedCodec: CompressedCodec? { shared.withLock { $0.codec.known ? $0.codec.name : .h264 } }

    /// The format as decoded (a size change mid-stream is followed); the rate the stream declares, else
    /// 30 for the listing.
    private func noteFormat(width: Int, height: Int, rate: Rational?) {
        shared.withLock {
            guard $0.format?.width != width || $0.format?.height != height else { return }
            $0.format = CameraFormat(pixelFormat: .i420, width: width, height: height, frameRate: rate ?? Rational(30))
        }
    }
}

/// A network camera's ISO copies its H.264/HEVC packets as they came (IsoPassthrough), on the
/// mapping its pictures are timed by; a stream in another codec is encoded from its pictures.
extension NetworkPullCamera: CompressedFrameSource {}
