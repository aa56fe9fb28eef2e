import Synchronization
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// The demo "microphone": interleaved float audio at the program's audio format, on its own thread.
///
/// Paced by the program's `AudioClock` (no drift by construction): every `chunkDuration` it delivers
/// exactly the samples due since `origin`, with `pts = MediaTime(count: firstSample, rate: rate)`.
/// `origin` is the program clock's origin, so audio sample k and video frame n share one timeline.
/// After a stall of the whole process the stalled time is silence (see `AudioClock`), and the signal
/// goes on from the sample due when the process runs again (the sample index sets its phase).
public final class TestToneSource: AudioInput {
    public enum Signal: Sendable, Hashable {
        /// A continuous sine; `level` is its peak in dBFS (-20 dBFS: peak 0.1, RMS 0.0707).
        case tone(frequency: Double, level: Double)
        /// The sine only during the first `duration` seconds of each second of program time (a beep
        /// on every whole second, handy to check A/V sync), silence otherwise.
        case beeps(frequency: Double, level: Double, duration: Double)
        case silence

        /// A quiet 1 kHz tone at -20 dBFS.
        public static let standard = Signal.tone(frequency: 1000, level: -20)
    }

    public let signal: Signal
    public let format: AudioFormat
    /// How often the thread wakes up to deliver what is due (10 ms by default).
    public let chunkDuration: Double
    /// The origin given at init, if any.
    public let origin: UInt64?
    /// No chunk carries more than this many seconds (after a stall the backlog comes in several chunks).
    public static var maximumChunkDuration: Double { AudioClock.maximumChunkDuration }
    private let core: Core

    /// - Parameters:
    ///   - deliver: called on the source's thread with each chunk; must not block.
    ///   - origin: the program clock's origin (monotonic ns of sample 0), used by `start()` when it is
    ///     given no origin of its own.
    ///   - clock: the clock it reads and sleeps on (tests pass a `ManualClock`).
    public init(signal: Signal = .standard, format: AudioFormat = .program, chunkDuration: Double = 0.01,
                origin: UInt64? = nil, threadName: String = "cap.tone", clock: any Clock = .monotonic,
                deliver: @escaping @Sendable (AudioChunk) -> Void) {
        self.signal = signal
        self.origin = origin
        self.format = format
        self.chunkDuration = min(max(chunkDuration, 0.001), Self.maximumChunkDuration)
        core = Core(signal: signal, audioClock: AudioClock(format: format, interval: UInt64(self.chunkDuration * 1e9), clock: clock),
                    threadName: threadName, deliver: deliver)
    }

    deinit { core.requestStop() }

    /// Starts delivering. `origin` is the monotonic time of program sample 0 (default: the origin given
    /// at init, else now). If it is in the future, delivery starts then, at sample 0; if it passed less
    /// than 0.1 s ago (a thread that started late), delivery still starts at sample 0; if it passed
    /// longer ago, the first chunk starts at the sample due now (nothing older is back-filled).
    public func start(origin: UInt64? = nil) { core.start(origin: origin ?? self.origin ?? core.audioClock.clock.now()) }

    /// Stops and joins the thread.
    public func stop() { core.stop() }

    /// Samples per channel delivered since `start`.
    public var framesDelivered: Int64 { core.counters.withLock { $0.delivered } }
    /// Index of the next sample to be delivered on the program timeline.
    public var nextSample: Int64 { core.counters.withLock { $0.next } }

    /// The value of sample `index` (same on every channel) for `signal` at `sampleRate`. The phase is
    /// computed from the index, so a chunk boundary never causes a click.
    public static func sampleValue(at index: Int64, signal: Signal, sampleRate: Int) -> Float {
        func sine(_ frequency: Double, _ level: Double) -> Float {
            let amplitude = pow(10, level / 20)
            // Reduce the index within one second first: exact phase for integer frequencies.
            let position = Double(index % Int64(sampleRate)) * frequency / Double(sampleRate)
            return Float(amplitude * sin(2 * Double.pi * (position - position.rounded(.down))))
        }
        switch signal {
        case .silence:
            return 0
        case let .tone(frequency, level):
            return sine(frequency, level)
        case let .beeps(frequency, level, duration):
            let withinSecond = Double(index % Int64(sampleRate)) / Double(sampleRate)
            return withinSecond < duration ? sine(frequency, level) : 0
        }
    }
}

extension TestToneSource {
    struct Counters: Sendable {
        var delivered: Int64 = 0
        var next: Int64 = 0
    }

    final class Core: Sendable {
        let signal: Signal
        let audioClock: AudioClock
        let threadName: String
        let deliver: @Sendable (AudioChunk) -> Void
        let counters = Mutex(Counters())
        private let worker = WorkerThread()

        init(signal: Signal, audioClock: AudioClock, threadName: String, deliver: @escaping @Sendable (AudioChunk) -> Void) {
            self.signal = signal
            self.audioClock = audioClock
            self.threadName = threadName
            self.deliver = deliver
        }

        func start(origin: UInt64) {
            worker.start(name: threadName) { [self] in run(origin: origin) }
        }

        func requestStop() { worker.requestStop() }

        func stop() { worker.stop() }

        private func run(origin: UInt64) {
            let format = audioClock.format
            let rate = format.sampleRate, channels = max(1, format.channels)
            // Every signal is a function of the sample index within its second (see sampleValue), so one
            // second is computed once and played from a table.
            let oneSecond: [Float] = signal == .silence ? [] : (0..<Int64(rate)).map {
                TestToneSource.sampleValue(at: $0, signal: signal, sampleRate: rate)
            }
            audioClock.run(origin: origin, stop: { worker.isStopRequested }, begin: { first in
                counters.withLock { $0 = Counters(delivered: 0, next: first) }
            }, fill: { chunk in
                let first = chunk.firstSample, count = chunk.frameCount
                if signal != .silence {
                    chunk.samples.withUnsafeMutableBufferPointer { buffer in
                        for frame in 0..<count {
                            let value = oneSecond[Int((first + Int64(frame)) % Int64(rate))]
                            for channel in 0..<channels { buffer[frame * channels + channel] = value }
                        }
                    }
                }
                counters.withLock {
                    $0.delivered += Int64(count)
                    $0.next = first + Int64(count)
                }
            }, stalled: { silence in
                // The process stood still: the tone does not play through the stalled time.
                counters.withLock {
                    $0.delivered += Int64(silence.frameCount)
                    $0.next = silence.firstSample + Int64(silence.frameCount)
                }
            }, deliver: deliver)
        }
    }
}
