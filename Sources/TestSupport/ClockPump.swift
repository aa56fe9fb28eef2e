import StudioSystem

/// Drives a `ManualClock` for the threads under test: each time `sleepers` of them sleep on it (they
/// did what was due), time moves on by `step`. Every tick then comes exactly on time however busy the
/// machine is, so a test of what happens on each frame (a transition's frame i, a cut on the next
/// frame) never sees a tick skipped because the test machine was late; real-time speed is what the
/// benchmarks measure, not these tests.
public final class ClockPump: Sendable {
    public let clock: ManualClock
    private let step: UInt64
    private let sleepers: Int
    private let worker = WorkerThread()

    /// A clock starting now on CLOCK_MONOTONIC (so frames stamped with the real clock are never from
    /// its future), moved on by `step` nanoseconds at a time.
    public init(step: UInt64, sleepers: Int = 1) {
        clock = ManualClock(start: MonotonicClock.now())
        self.step = step
        self.sleepers = sleepers
    }

    public func start() {
        let (clock, step, sleepers) = (clock, step, sleepers)
        worker.start(name: "test.clockpump") { [worker] in
            while !worker.isStopRequested {
                // Waits (in real time, briefly) for the threads to sleep, then lets the next step come.
                guard clock.waitForSleepers(sleepers, timeoutSeconds: 0.1) else { continue }
                clock.advance(by: step)
            }
        }
    }

    public func stop() { worker.stop() }

    deinit { worker.requestStop() }
}
