import StudioCore
import StudioSystem

/// The network source's jitter buffer on the way out: decoded pictures and audio spans wait here until
/// they are due (`PullTimeline`), and the playout thread (`net.NAME.out`) hands each out on time, the
/// pictures to the camera's newest frame and the audio to its `TimedAudioInput`, so both keep the same
/// delay and stay in sync. Of several pictures due at once only the newest is shown (the others were
/// late: counted as dropped). Bounded: past `maximumPictures` or `maximumSpans` the oldest goes
/// (counted), so a source that sends faster than real time cannot grow it.
final class PullPlayout: Sendable {
    enum Payload: Sendable {
        case picture(VideoFrame)
        case audio([Float])
    }

    struct Counters: Sendable {
        var shown: UInt64 = 0
        var dropped: UInt64 = 0
        var overflowed: UInt64 = 0
    }

    private struct Queue: Sendable {
        var pictures: [(due: UInt64, frame: VideoFrame)] = []
        var spans: [(due: UInt64, samples: [Float])] = []
        var counters = Counters()
        var stopping = false
    }

    let maximumPictures: Int
    let maximumSpans: Int
    private let condition = ConditionLock()
    /// Under `condition`'s lock only (`Mutex`-free so the thread can wait on the same lock).
    private let queue = LockedBox(Queue())

    init(maximumPictures: Int = 90, maximumSpans: Int = 400) {
        self.maximumPictures = maximumPictures
        self.maximumSpans = maximumSpans
    }

    var counters: Counters { condition.withLock { queue.value.counters } }
    /// How many pictures wait (the buffer's depth in pictures).
    var waitingPictures: Int { condition.withLock { queue.value.pictures.count } }

    func add(_ payload: Payload, due: UInt64) {
        condition.withLock {
            switch payload {
            case .picture(let frame):
                queue.value.pictures.append((due, frame))
                if queue.value.pictures.count > maximumPictures {
                    queue.value.pictures.removeFirst()
                    queue.value.counters.overflowed += 1
                }
            case .audio(let samples):
                queue.value.spans.append((due, samples))
                if queue.value.spans.count > maximumSpans { queue.value.spans.removeFirst() }
            }
            condition.signal()
        }
    }

    /// Forgets everything waiting (a new connection: nothing stale is shown).
    func flush() {
        condition.withLock {
            queue.value.pictures.removeAll()
            queue.value.spans.removeAll()
        }
    }

    func stop() {
        condition.withLock {
            queue.value.stopping = true
            condition.broadcast()
        }
    }

    func restart() { condition.withLock { queue.value.stopping = false } }

    /// The playout thread's loop: waits for the next item's time and hands out what is due, until `stop`.
    /// `tick` is called at every wake (at least every 100 ms), after what was due was handed out.
    func run(clock: any Clock, picture: (VideoFrame, _ releasedAt: UInt64) -> Void, audio: ([Float], _ releasedAt: UInt64) -> Void,
             tick: (_ now: UInt64) -> Void = { _ in }) {
        while true {
            var shown: VideoFrame?
            var spans: [[Float]] = []
            var now: UInt64 = 0
            let keepGoing = condition.withLock { () -> Bool in
                if queue.value.stopping { return false }
                now = clock.now()
                let next = min(queue.value.pictures.first?.due ?? .max, queue.value.spans.first?.due ?? .max)
                if next > now {
                    // Out-of-order timestamps (B-frames are decoded in order, so rare): the queue is kept in
                    // arrival order and the wait is for its head; a wait is at most 100 ms (for `tick`).
                    _ = condition.wait(untilMonotonic: min(next, now + 100_000_000))
                    if queue.value.stopping { return false }
                    now = clock.now()
                }
                var due = 0
                while due < queue.value.pictures.count, queue.value.pictures[due].due <= now { due += 1 }
                if due > 0 {
                    shown = queue.value.pictures[due - 1].frame
                    queue.value.counters.shown += 1
                    queue.value.counters.dropped += UInt64(due - 1)
                    queue.value.pictures.removeFirst(due)
                }
                var ready = 0
                while ready < queue.value.spans.count, queue.value.spans[ready].due <= now { ready += 1 }
                spans = queue.value.spans.prefix(ready).map(\.samples)
                queue.value.spans.removeFirst(ready)
                return true
            }
            guard keepGoing else { return }
            for samples in spans { audio(samples, now) }
            if let shown { picture(shown, now) }
            tick(now)
        }
    }
}

/// A value guarded by a lock its owner holds (here `PullPlayout.condition`'s).
///
/// `@unchecked Sendable`: invariant — `value` is read and written only while the owner's lock is held.
final class LockedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
