import Foundation
import Synchronization
import StudioCore
import StudioSystem

/// One destination (an RTMP URL or a recording file) on its own thread ("out.NAME"), fed through an
/// `OutputQueue` by `accept`, which never blocks.
///
/// The thread runs an `OutputLoop` (keyframe gating, the audio hold, statistics, events, backoff) that
/// writes to a `Destination`: a `NetworkDestination` (RTMP or SRT: reconnects, in-band sequence headers) or a
/// `RecordingDestination` (parts after write failures, a new file per generation, flushes).
public final class MediaOutput: Sendable {
    public let destination: OutputDestination
    /// A recording's tags, asked for each time a file is opened (its header), with the program time of the
    /// file's first video packet (its keyframe: such a file is opened only once that keyframe is at hand):
    /// an ISO file's time base and timecode.
    let fileTags: (@Sendable (_ firstVideo: MediaTime?) -> [String: String])?
    public let policy: OutputPolicy
    let events: EventSink
    let requestKeyframe: @Sendable () -> Void
    /// The clock of the output's decisions: the backoff before each new attempt, when to ask for a
    /// keyframe again, when to report congestion (tests pass a `ManualClock`). Latencies are measured on
    /// the monotonic clock that stamped the frames, and libavformat's I/O deadlines are real time.
    let clock: any Clock
    let queue: OutputQueue
    let interrupt = InterruptState()
    private let shared: Mutex<Shared>

    private struct Shared {
        var statistics: OutputStatistics
        var thread: NamedThread?
        var started = false
        var stopRequested = false
    }

    public init(destination: OutputDestination, events: EventSink, requestKeyframe: @escaping @Sendable () -> Void,
                policy: OutputPolicy = .init(), clock: any Clock = .monotonic, fileTags: (@Sendable (_ firstVideo: MediaTime?) -> [String: String])? = nil) {
        self.clock = clock
        self.fileTags = fileTags
        self.destination = destination
        self.events = events
        self.requestKeyframe = requestKeyframe
        self.policy = policy
        queue = OutputQueue(limits: policy.queueLimits)
        shared = Mutex(Shared(statistics: OutputStatistics(name: destination.name, maskedURL: destination.maskedURL)))
    }

    /// Its thread's name: `out.NAME`.
    public var threadName: String { "out.\(destination.name)" }

    /// Starts the output thread. A closed connection must surface as EPIPE, so SIGPIPE is ignored
    /// process-wide here.
    public func start() {
        Signals.ignoreSIGPIPE()
        shared.withLock { shared in
            guard !shared.started else { return }
            shared.started = true
            shared.thread = NamedThread.start(name: threadName) { [self] in
                var loop = OutputLoop(output: self)
                loop.run()
            }
        }
    }

    /// Queues an item for this destination. Never blocks; over the queue's limits the drop policy
    /// applies. `.endOfStream` lets the output drain, write the trailer and stop.
    public func accept(_ item: MediaItem) {
        if case .endOfStream = item { queue.close() } else { queue.offer(item) }
    }

    /// Drains what it can within the timeout, writes the trailer, closes. Returns within about
    /// `timeoutSeconds` whatever the network does.
    public func stop(timeoutSeconds: Double) {
        let start = MonotonicClock.now()
        let budget = max(0.1, timeoutSeconds)
        // Leave a little of the budget for closing after the drain deadline.
        interrupt.hardDeadline.store(start + UInt64(budget * 0.8 * 1e9), ordering: .relaxed)
        interrupt.abortConnecting.store(true, ordering: .relaxed)
        let thread = shared.withLock { shared -> NamedThread? in
            shared.stopRequested = true
            return shared.thread
        }
        queue.close()
        if let thread {
            let elapsed = Double(MonotonicClock.now() - start) / 1e9
            thread.join(timeoutSeconds: max(0.05, budget - elapsed))
        }
        shared.withLock { shared in
            if shared.statistics.state != .failed { shared.statistics.state = .stopped }
        }
    }

    public var statistics: OutputStatistics {
        var statistics = shared.withLock { $0.statistics }
        statistics.droppedVideo = queue.droppedVideo
        statistics.droppedAudio = queue.droppedAudio
        if let next = statistics.nextAttemptAt {
            let now = clock.now()
            statistics.secondsToNextAttempt = Double(next > now ? next - now : 0) / 1e9
        }
        return statistics
    }

    // MARK: - used by the output loop

    var stopRequested: Bool { shared.withLock { $0.stopRequested } }
    func update(_ body: (inout OutputStatistics) -> Void) { shared.withLock { body(&$0.statistics) } }

    /// Sleeps up to `seconds` of the output's clock, waking early on stop. Returns false if stop was requested.
    func pause(seconds: Double) -> Bool {
        let deadline = clock.now() + UInt64(max(0, seconds) * 1e9)
        return clock.sleep(until: deadline, unless: { stopRequested }) && !stopRequested
    }
}
