import Synchronization
import StudioCore
import StudioSystem
import Capture
import Output

/// How a camera's ISO file is made.
public enum IsoMode: String, Sendable {
    /// The camera's own compressed frames (its JPEG images), copied into the file as they came.
    case passthrough
    /// The camera's decoded frames through an ISO encoder (x264 or VAAPI).
    case encode
}

extension IsoMode {
    /// What an operator should know after `camera`'s mode changed mid-show (`studio camera`) and it now
    /// `sendsCompressed` or not, its ISO in `mode` (nil: none): a passthrough ISO, which records the
    /// camera's own JPEGs, encodes the raw frames into a new file meanwhile (an encoder's CPU).
    public static func warning(afterModeChangeOf camera: CameraID, sendsCompressed: Bool, iso mode: IsoMode?) -> String? {
        guard mode == .passthrough, !sendsCompressed else { return nil }
        return "\(camera.name)'s ISO records the camera's own JPEG images, and the device offers this mode raw only: "
            + "the ISO encodes the raw frames (an encoder's CPU) into a new file until a JPEG mode is back (a size the device sends as MJPEG)"
    }
}

/// A passthrough ISO feed: every compressed frame the camera receives (`CompressedFrameSource`) comes
/// through a bounded queue (`CompressedFrameQueue`, `queueCapacity`: a full queue refuses the newest
/// and counts it, keyframes last; the camera never waits) to this feed's thread (`iso.camN`), which
/// stamps it on the program's timeline and hands it, bytes untouched, to the ISO's file output. A
/// webcam's JPEG goes by the same grid as an encoded ISO (`FrameGrid.firstFrame(atOrAfter:)` of its
/// capture time: the tick that would have taken it), as a keyframe packet. A network camera's H.264 or
/// HEVC packet goes at its media time on the mapping its picture is timed by (`IsoPacketStamps`), from
/// a keyframe, a group of pictures at a time (`groupLimit`), with the stream's own parameters as the
/// file's extradata. The stream's size from the
/// frames: a new size, codec or parameters is a new stream description, generation + 1, `-gN.mkv`. No
/// decoding, no encoding: a camera's ISO costs a copy.
final class IsoPassthrough: Sendable {
    struct Statistics: Sendable {
        var codec: CompressedCodec?
        var width = 0
        var height = 0
        var generation = 0
        /// Frames handed to the file.
        var framesWritten = 0
        /// Frames captured before the program's origin (not part of the recording).
        var framesBeforeOrigin = 0
        /// A network camera's own sound: AAC packets copied to the file's second audio track.
        var soundPackets = 0
        /// A network camera's H.264/HEVC packets set aside until the next keyframe (see `IsoPacketStamps`):
        /// before the first, after one the queue refused, a reconnect or a jump of the stream's timestamps.
        var framesSetAside = 0
        /// The most packets a group held before it was written: bounded by `groupLimit` of the stream's
        /// media time, whether its pictures come or only its sound does.
        var mostHeld = 0
    }

    /// About a second of frames: a disk hiccup is absorbed, a longer stall drops (and counts).
    static let queueCapacity = 32

    private let name: String
    private let deliver: @Sendable (MediaItem) -> Void
    /// The source's own sound (a network camera's AAC): its second audio track's items.
    private let deliverAudio: @Sendable (MediaItem) -> Void
    /// The second audio track's title.
    static let soundTitle = "the camera's own sound"
    private let queue = CompressedFrameQueue(capacity: queueCapacity)
    private let worker = WorkerThread()
    private let counters = Mutex(Statistics())
    /// The tap the queue is attached to (the camera recorded now), nil before `start` and after `finish`.
    private let attached = Mutex<CompressedFrameTap?>(nil)
    private let started = Atomic<Bool>(false)

    /// - Parameters:
    ///   - name: the thread's name (`iso.camN`).
    ///   - deliver: takes the stream's items (format, packets, end of stream); must not block.
    init(name: String, deliver: @escaping @Sendable (MediaItem) -> Void, deliverAudio: @escaping @Sendable (MediaItem) -> Void = { _ in }) {
        self.name = name
        self.deliver = deliver
        self.deliverAudio = deliverAudio
    }

    var statistics: Statistics { counters.withLock { $0 } }
    /// Frames the queue refused (the feed's thread was behind).
    var framesDropped: Int { queue.dropped }

    /// Attaches to `camera`'s frames and starts stamping them on `grid`; `idle` is called on the feed's
    /// thread whenever no frame came for 0.2 s (must not block). Only the first call does anything.
    func start(grid: FrameGrid, camera: any Camera, idle: @escaping @Sendable () -> Void = {}) {
        guard !started.exchange(true, ordering: .sequentiallyConsistent) else { return }
        attach(camera)
        worker.start(name: name) { [self] in run(grid: grid, idle: idle) }
    }

    /// Records `camera` from now on (the same device came back as a new object).
    func rebind(to camera: any Camera) {
        guard started.load(ordering: .sequentiallyConsistent) else { return }
        attach(camera)
    }

    private func attach(_ camera: any Camera) {
        let tap = (camera as? any CompressedFrameSource)?.compressedFrames
        attached.withLock { attached in
            guard !queue.isClosed else { return }  // finished
            attached?.detach(queue)
            tap?.attach(queue)
            attached = tap
        }
    }

    /// Detaches from the camera and ends the stream: what is queued is written, then end of stream.
    func finish() {
        attached.withLock { tap in
            tap?.detach(queue)
            tap = nil
            queue.close()
        }
        worker.stop()
    }

    /// A network camera's packets are written a group of pictures at a time (at the next keyframe, after
    /// this much of its media time, or when the stream pauses), all on the mapping of the group's newest
    /// packet: the timeline settles as packets come (a burst at connect, the soonest packet's path
    /// delay), and a group stamped on its own start's mapping could land before the one written last.
    static let groupLimit: Int64 = 2_000_000_000

    private func run(grid: FrameGrid, idle: @Sendable () -> Void) {
        var last: Int64?
        var description: StreamDescription?
        let tick = grid.pts(ofFrame: 1)
        var stamps = IsoPacketStamps(origin: grid.origin, frameDuration: tick)
        var group: [CompressedVideoFrame] = []
        var mostHeld = 0

        /// Announces a new stream when `frame` differs from it (size, codec, parameters): generation + 1.
        func describe(_ frame: CompressedVideoFrame) {
            guard description?.width != frame.width || description?.height != frame.height || description?.codec != frame.codec.codecKind
                    || description?.extradata != frame.parameters else { return }
            let generation = description.map { $0.generation + 1 } ?? 0
            let next = StreamDescription(kind: .video, codec: frame.codec.codecKind, width: frame.width, height: frame.height,
                                         frameRate: grid.rate, bitRate: 0, extradata: frame.parameters, encoderName: "passthrough",
                                         generation: generation)
            description = next
            // A new file starts at a keyframe.
            stamps.restart()
            counters.withLock {
                $0.codec = frame.codec
                $0.width = frame.width
                $0.height = frame.height
                $0.generation = generation
            }
            deliver(.format(next))
        }

        var sound: StreamDescription?
        /// The source's own sound as the ISO's second audio track, announced when it first comes or changes.
        func announceSound(_ frame: CompressedVideoFrame) {
            guard sound?.extradata != frame.parameters || sound?.sampleRate != frame.sampleRate || sound?.channels != frame.channels else { return }
            var next = StreamDescription(kind: .audio, codec: .aac, sampleRate: frame.sampleRate, channels: frame.channels, bitRate: 0,
                                         extradata: frame.parameters, encoderName: "passthrough", generation: (sound?.generation ?? -1) + 1)
            next.track = 1
            next.title = Self.soundTitle
            sound = next
            deliverAudio(.format(next))
        }

        func write(_ frame: CompressedVideoFrame, pts: MediaTime, dts: MediaTime, duration: MediaTime) {
            var packet = EncodedPacket(kind: .video, data: frame.bytes, pts: pts, dts: dts, duration: duration,
                                       isKeyframe: frame.isKeyframe, generation: description?.generation ?? 0)
            // Its way to the file: captured, handed to the output now (the output adds its queue and write).
            packet.times = FrameTimes(capture: frame.captureTime, encodeEnd: MonotonicClock.now())
            deliver(.packet(packet))
            counters.withLock { $0.framesWritten += 1 }
        }

        /// Writes the group on its newest packet's mapping (`IsoPacketStamps`: from a keyframe).
        func flush() {
            guard let offset = group.last?.timing?.offset else { return }
            for frame in group {
                // Possibly cut short by its connection's end: set aside (the next connection starts
                // from a keyframe, in a new epoch, so nothing after it needed it).
                if frame.endsItsStream {
                    counters.withLock { $0.framesSetAside += 1 }
                    continue
                }
                if !frame.codec.isAudio { describe(frame) }
                guard var timing = frame.timing else { continue }
                timing.offset = offset
                if frame.codec.isAudio {
                    if case .write(let pts, let dts, let duration) = stamps.stampAudio(timing) {
                        var packet = EncodedPacket(kind: .audio, data: frame.bytes, pts: pts, dts: dts, duration: duration, isKeyframe: true)
                        packet.track = 1
                        deliverAudio(.packet(packet))
                        counters.withLock { $0.soundPackets += 1 }
                    }
                    continue
                }
                guard case .write(let pts, let dts, let duration) = stamps.stamp(timing, isKeyframe: frame.isKeyframe, refusals: frame.refusedBefore) else {
                    counters.withLock { $0.framesSetAside += 1 }
                    continue
                }
                write(frame, pts: pts, dts: dts, duration: duration)
            }
            group.removeAll(keepingCapacity: true)
        }

        while true {
            let frame: CompressedVideoFrame
            switch queue.pop(timeoutSeconds: 0.2) {
            case .timedOut:
                flush()
                idle()
                continue
            case .endOfStream:
                flush()
                deliver(.endOfStream)
                return
            case .item(let item): frame = item
            }
            if let timing = frame.timing {
                // A network camera's packet: its group is written when the next begins. Its sound's track
                // is announced at once, so the file opens with it. The sound alone (pictures stalled while
                // it goes on) ends a group too, at `groupLimit`, so the group stays bounded.
                if frame.codec.isAudio { announceSound(frame) }
                let picture = !frame.codec.isAudio
                if let first = group.first?.timing, timing.epoch != first.epoch || timing.dts - first.dts >= Self.groupLimit
                    || picture && (frame.isKeyframe || timing.dts < first.dts) {
                    flush()
                }
                group.append(frame)
                if group.count > mostHeld {
                    mostHeld = group.count
                    counters.withLock { $0.mostHeld = mostHeld }
                }
                continue
            }
            guard frame.captureTime >= grid.origin else {
                counters.withLock { $0.framesBeforeOrigin += 1 }
                continue
            }
            describe(frame)
            // The tick that would have taken it; a frame that came on the heels of the previous one gets the next.
            var n = grid.firstFrame(atOrAfter: frame.captureTime)
            if let last, n <= last { n = last + 1 }
            last = n
            let pts = grid.pts(ofFrame: n)
            write(frame, pts: pts, dts: pts, duration: tick)
        }
    }
}
