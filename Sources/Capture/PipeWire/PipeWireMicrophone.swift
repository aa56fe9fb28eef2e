import CPipeWire
import Synchronization
import StudioCore
import StudioSystem

/// The program's audio from a PipeWire Audio/Source (a microphone), on the program's timeline.
///
/// A thread (`cap.mic`) runs the program's `AudioClock`, like `TestToneSource`: every `chunkDuration`
/// it delivers the samples due since the origin, so the timeline never has holes.
/// The samples come from a `TimedAudioInput` (a jitter buffer) that the stream's process callback fills (copy only);
/// whatever the microphone has not supplied (no daemon, no such node, the node went away, a late
/// quantum, the whole process stalled: see `AudioClock`) is silence. A second thread (`cap.mic.conn`, see
/// `Capture`) does all that waits on the daemon, so the clock never does: it finds the node (by `nodeName`; without one, the daemon's
/// default: the node named by `default.audio.source` in the "default" metadata a session manager keeps,
/// else the Audio/Source with the highest `priority.session`, then the lowest id), creates the capture
/// stream and links it itself, one link per channel matched by `audio.channel`, so no session manager is
/// needed; when the node goes away it waits for it to come back and picks it up again. Following the
/// default, it moves to the new node when the metadata names another existing Audio/Source (the
/// timeline goes on; the switch costs a jitter buffer of silence).
///
/// The stream asks for interleaved F32 at `format` (48 kHz stereo); the stream's own converter (the
/// adapter's audioconvert, in dsp port mode) resamples and remixes whatever the source delivers. The
/// source's clock is not the program's: the buffer is read through an `AdaptiveResampler` whose step a
/// `ClockRatioEstimator` sets from the buffer's fill, so a source some hundred ppm fast or slow keeps a
/// fixed delay; discarding and inserting are the last resort, counted (`AudioInputStatus`). A source published
/// through a client's own stream has no ports until its adapter is configured: the microphone sets its
/// PortConfig itself when no session manager did (see docs/pipewire.md).
///
/// In an `AudioInputSet` a microphone is `PipeWireMicrophone.input(node:...)`: the same capture
/// (`Capture`) on the set's clock thread instead of its own.
public final class PipeWireMicrophone: AudioInput {
    public let nodeName: String?
    public let format: AudioFormat
    public let remote: String?
    public let chunkDuration: Double
    private let capture: Capture
    private let audioClock: AudioClock
    private let threadName: String
    private let deliver: @Sendable (AudioChunk) -> Void
    private let worker = WorkerThread()

    /// - Parameters:
    ///   - nodeName: the Audio/Source's node.name; nil for the default (see the type's doc).
    ///   - report: one line for the operator's log when the microphone or daemon is missing, found or lost.
    ///   - clock: the clock of its audio pump and retries (tests pass a `ManualClock`).
    ///   - deliver: called on the microphone's thread with each chunk; must not block.
    public init(nodeName: String? = nil, format: AudioFormat = .program, remote: String? = nil, chunkDuration: Double = 0.01,
                retryInterval: Double = 2, threadName: String = "cap.mic", clock: any Clock = .monotonic,
                report: @escaping @Sendable (String) -> Void = { _ in }, deliver: @escaping @Sendable (AudioChunk) -> Void) {
        self.nodeName = nodeName
        self.format = format
        self.remote = remote
        self.chunkDuration = AudioInputSet.clampedChunkDuration(chunkDuration)
        self.threadName = threadName
        self.deliver = deliver
        audioClock = AudioClock(format: format, interval: UInt64(self.chunkDuration * 1e9), clock: clock)
        capture = Capture(nodeName: nodeName, input: TimedAudioInput(Self.label(nodeName), format: format, chunkDuration: self.chunkDuration, clock: clock),
                          remote: remote, retryInterval: max(0.1, retryInterval), threadName: threadName, report: report)
    }

    /// A microphone as one input of an `AudioInputSet` (on the set's clock thread, `threadName`; its
    /// connect thread is `threadName.conn`), for the set's `format`, `chunkDuration` and `clock`.
    /// - Parameters:
    ///   - node: the Audio/Source's node.name; nil for the default (see the type's doc).
    ///   - report: one line for the operator's log when the microphone or daemon is missing, found or lost.
    public static func input(node: String?, format: AudioFormat = .program, remote: String? = nil,
                             chunkDuration: Double = AudioInputSet.standardChunkDuration, retryInterval: Double = 2,
                             threadName: String = "cap.audio", clock: any Clock = .monotonic,
                             report: @escaping @Sendable (String) -> Void = { _ in }) -> any ClockedAudioInput {
        Capture(nodeName: node, input: TimedAudioInput(label(node), format: format, chunkDuration: chunkDuration, clock: clock),
                remote: remote, retryInterval: max(0.1, retryInterval), threadName: threadName, report: report)
    }

    /// How a microphone input is named (`AudioInputSet.inputs`, the `audio` reply's `source`):
    /// `pipewire:NODE`, `pipewire:default` without a node name.
    public static func label(_ node: String?) -> String { "pipewire:\(node ?? "default")" }

    deinit { worker.requestStop() }

    /// Starts the clock: sample 0 is due at `origin` (default now), as with `TestToneSource.start`.
    public func start(origin: UInt64? = nil) {
        let origin = origin ?? audioClock.clock.now()
        worker.start(name: threadName) { [self] in
            audioClock.run(origin: origin, stop: { worker.isStopRequested }, begin: { capture.begin(first: $0, origin: origin) },
                           fill: capture.fill, stalled: capture.stalled, deliver: deliver)
            capture.end()
        }
    }

    public func stop() { worker.stop() }
    public var status: AudioInputStatus { capture.status }
    /// Buffers received and the layout of the last one, for test messages.
    public var diagnostics: String {
        let quanta = capture.quanta.load(ordering: .relaxed), last = capture.lastChunk.withLock { $0 }
        return "quanta \(quanta), last chunk size \(last.0) maxsize \(last.1) offset \(last.2) datas \(last.3)"
    }

    /// Picks the node to capture among the registry's nodes: the one named `nodeName`, or (nil) the one
    /// named `defaultName` (the metadata's default.audio.source) if it is an Audio/Source, else the
    /// Audio/Source with the highest priority.session, then the lowest id.
    static func choose(_ nodes: [PipeWireGlobal], nodeName: String?, defaultName: String? = nil) -> PipeWireGlobal? {
        let sources = nodes.filter { $0.isNode && $0.mediaClass == "Audio/Source" }
        if let nodeName { return sources.first { $0.properties["node.name"] == nodeName } }
        if let defaultName, let node = sources.first(where: { $0.properties["node.name"] == defaultName }) { return node }
        return sources.max { a, b in
            let pa = Int(a.properties["priority.session"] ?? "") ?? 0, pb = Int(b.properties["priority.session"] ?? "") ?? 0
            return pa != pb ? pa < pb : a.id > b.id
        }
    }
}
