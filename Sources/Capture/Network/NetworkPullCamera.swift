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
    let decodeDemand: CameraDemand
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

    struct Shared: Sendable {
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

    // Internal, not private: the receive thread's extension (NetworkPullCamera+Receive.swift) reads them.
    let shared: Mutex<Shared>
    let receiver = WorkerThread()
    private let player = WorkerThread()
    let interrupt: PullInterrupt
    let playout = PullPlayout()
    /// Wakes the receive thread from its backoff on stop.
    let backoff = ConditionLock()
    let clock: any Clock
    let log: @Sendable (String) -> Void

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

    var isPublishing: Bool { shared.withLock { $0.status.publishing ?? true } }

    /// Its SRT caller connected (the listener accepted it): read it now. A caller that comes back
    /// replaces its previous connection at once (closed, so a read of it ends). The previous one is hung
    /// up before the new one is handed over: a hang-up landing after the receive thread had taken the
    /// new connection would end that one before it opened, and leave the camera waiting for good.
    func publishStarted(srt connection: SRTConnection, from address: String) {
        let previous = shared.withLock { $0.caller }
        if let previous {
            interrupt.hangUp()
            previous.close()
        }
        shared.withLock {
            $0.caller = connection
            $0.callerIsNew = true
            $0.status.publishing = true
        }
        log("\(id.name): its SRT caller connected (\(address))\(previous == nil ? "" : ", in place of its previous connection")")
        backoff.withLock { backoff.broadcast() }
    }

    /// The source to open now: the URL, or the newest SRT caller's connection. Nil: none waiting (the
    /// caller that woke the thread was replaced or gone already), and the camera waits for the next;
    /// said under the same lock a new caller is handed over with, so none is missed.
    func nextSource(_ kind: PullKind) -> PullConnection.Source? {
        guard pull.arrivesOnListener else { return .url(pull.url, kind) }
        return shared.withLock { shared in
            guard shared.callerIsNew, let caller = shared.caller else {
                shared.status.publishing = false
                return nil
            }
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
    /// A phone's publisher or an SRT caller comes when it comes: starting until then. A pull is studio's
    /// own call: one that finds nobody there is lost (and tried again).
    public var waitsForItsSource: Bool { pull.waitsForPublisher || pull.arrivesOnListener }
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
    func repeatPicture(now: UInt64) {
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
    func notePacket(at now: UInt64) {
        shared.withLock { shared in
            if let last = shared.lastPacket, now > last { shared.gaps.current = max(shared.gaps.current, now - last) }
            if now - shared.gaps.since >= 10_000_000_000 { shared.gaps = (0, shared.gaps.current, now) }
            shared.lastPacket = now
        }
    }

    /// A picture's capture time from a node's stream (`CaptureTimeSEI`), against this machine's wall
    /// clock now (its packet's arrival).
    func noteCaptureTime(_ stamp: CaptureTimeSEI) {
        let latency = Double(WallClock.system.now() - stamp.captureTime) / 1000
        shared.withLock { shared in
            shared.status.captureTime = NetworkSourceStatus.CaptureTiming(
                captureLatencyMilliseconds: (latency * 10).rounded() / 10,
                nodeOffsetMilliseconds: stamp.offsetMeasured ? Double(stamp.offset) / 1000 : nil, nodeOffsetMeasured: stamp.offsetMeasured,
                picturesStamped: (shared.status.captureTime?.picturesStamped ?? 0) + 1)
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

    /// The codec its ISO copies (`CompressedFrameSource`): the newest connection's, H.264 before the first.
    public var compressedCodec: CompressedCodec? { shared.withLock { $0.codec.known ? $0.codec.name : .h264 } }

    /// The format as decoded (a size change mid-stream is followed); the rate the stream declares, else
    /// 30 for the listing.
    func noteFormat(width: Int, height: Int, rate: Rational?) {
        shared.withLock {
            guard $0.format?.width != width || $0.format?.height != height else { return }
            $0.format = CameraFormat(pixelFormat: .i420, width: width, height: height, frameRate: rate ?? Rational(30))
        }
    }
}

/// A network camera's ISO copies its H.264/HEVC packets as they came (IsoPassthrough), on the
/// mapping its pictures are timed by; a stream in another codec is encoded from its pictures.
extension NetworkPullCamera: CompressedFrameSource {}
