import Testing
import Synchronization
import Capture
import StudioCore
import StudioSystem

/// Collects every chunk a source delivers.
private final class ChunkLog: Sendable {
    let chunks = Mutex<[AudioChunk]>([])
    var all: [AudioChunk] { chunks.withLock { $0 } }
    func append(_ chunk: AudioChunk) { chunks.withLock { $0.append(chunk) } }
}

private func samplesDue(at time: UInt64, origin: UInt64) -> Int64 {
    time <= origin ? 0 : Int64((time - origin) / 1000) * 48_000 / 1_000_000
}

/// Lets `seconds` pass on `clock` in steps of one 10 ms wake-up, the source doing what is due after each
/// (as in real time, minus the machine's load).
private func play(_ clock: ManualClock, seconds: Double) {
    #expect(clock.waitForSleepers(1), "the source's thread never slept")
    #expect(clock.run(to: clock.now() + UInt64(seconds * 1e9), step: 10_000_000), "the source's thread did not keep up")
}

/// Checks the chunks form one gap-free run from `firstSample`, with pts from the sample index.
private func expectContiguous(_ chunks: [AudioChunk], from firstSample: Int64) {
    var next = firstSample
    for chunk in chunks {
        #expect(chunk.firstSample == next, "gap or overlap at sample \(next)")
        #expect(chunk.pts == MediaTime(count: chunk.firstSample, rate: Rational(48_000)))
        #expect(chunk.format == AudioFormat.program)
        #expect(chunk.samples.count == chunk.frameCount * 2)
        next = chunk.firstSample + Int64(chunk.frameCount)
    }
}

/// Time passes on a `ManualClock`: the pacing is checked exactly, however busy the machine is.
@Suite(.serialized) struct TestToneSourceTests {
    @Test func deliversExactlyTheSamplesDueWithContiguousPts() throws {
        let log = ChunkLog()
        let clock = ManualClock()
        let source = TestToneSource(clock: clock, deliver: { log.append($0) })
        let origin = clock.now() + 20_000_000  // program starts 20 ms from now
        source.start(origin: origin)
        defer { source.stop() }
        for _ in 0..<12 {
            play(clock, seconds: 0.05)
            let before = clock.now()
            let delivered = source.nextSample
            let after = clock.now()
            // Never ahead of the clock, never more than a few wake-ups (10 ms = 480 samples) behind.
            #expect(delivered <= samplesDue(at: after, origin: origin) + 1)
            #expect(delivered >= samplesDue(at: before, origin: origin) - 3 * 480, "delivered \(delivered)")
        }
        source.stop()
        let chunks = log.all
        #expect(chunks.count >= 20)
        #expect(chunks.first?.firstSample == 0)
        expectContiguous(chunks, from: 0)
        let total = chunks.reduce(0) { $0 + Int64($1.frameCount) }
        #expect(total == source.framesDelivered)
        #expect(total == source.nextSample)
    }

    @Test func startsAtTheSampleDueWhenTheOriginIsPast() throws {
        let log = ChunkLog()
        let clock = ManualClock(start: 10_000_000_000)
        let origin = clock.now() - 2_000_000_000  // program started 2 s ago
        let source = TestToneSource(signal: .silence, origin: origin, clock: clock, deliver: { log.append($0) })
        source.start()
        play(clock, seconds: 0.1)
        source.stop()
        let chunks = log.all
        let first = try #require(chunks.first)
        #expect(abs(first.firstSample - 96_000) < 48_000 / 10, "first sample \(first.firstSample)")
        #expect(first.pts.seconds > 1.9 && first.pts.seconds < 2.2)
        expectContiguous(chunks, from: first.firstSample)
    }

    @Test func toneIsAOneKilohertzSineAtMinus20dBFS() throws {
        let log = ChunkLog()
        let clock = ManualClock()
        let source = TestToneSource(signal: .standard, clock: clock, deliver: { log.append($0) })
        source.start(origin: clock.now())
        play(clock, seconds: 0.25)
        source.stop()
        let left = log.all.flatMap { chunk in stride(from: 0, to: chunk.samples.count, by: 2).map { chunk.samples[$0] } }
        let right = log.all.flatMap { chunk in stride(from: 1, to: chunk.samples.count, by: 2).map { chunk.samples[$0] } }
        try #require(left.count >= 4800)
        #expect(left == right)
        let peak = left.map { abs($0) }.max() ?? 0
        let rms = (left.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(left.count)).squareRoot()
        #expect(abs(Double(peak) - 0.1) < 0.001, "peak \(peak)")
        #expect(abs(rms - 0.1 / 2.0.squareRoot()) < 0.001, "rms \(rms)")
        // 1 kHz: two zero crossings per millisecond.
        var crossings = 0
        for i in 1..<left.count where (left[i - 1] < 0) != (left[i] < 0) { crossings += 1 }
        let expected = Double(left.count) / 48.0 * 2
        #expect(abs(Double(crossings) - expected) <= 3, "crossings \(crossings), expected \(expected)")
    }

    @Test func silenceIsZeros() throws {
        let log = ChunkLog()
        let clock = ManualClock()
        let source = TestToneSource(signal: .silence, clock: clock, deliver: { log.append($0) })
        source.start(origin: clock.now())
        play(clock, seconds: 0.1)
        source.stop()
        let chunks = log.all
        try #require(!chunks.isEmpty)
        #expect(chunks.allSatisfy { $0.samples.allSatisfy { $0 == 0 } })
        expectContiguous(chunks, from: chunks[0].firstSample)
        #expect(chunks.reduce(0) { $0 + $1.frameCount } > 2400)
    }

    /// On the real clock (the server's): it keeps delivering, gap-free; how fast is the tests above's job.
    @Test func runsOnTheMonotonicClock() throws {
        let log = ChunkLog()
        let source = TestToneSource(signal: .silence, deliver: { log.append($0) })
        source.start()
        defer { source.stop() }
        let deadline = MonotonicClock.now() + 20_000_000_000
        while source.nextSample < 4800, MonotonicClock.now() < deadline { MonotonicClock.sleep(seconds: 0.01) }
        source.stop()
        #expect(source.nextSample >= 4800, "0.1 s of audio within 20 s")
        expectContiguous(log.all, from: 0)
    }

    @Test func beepsSoundAtTheStartOfEachProgramSecond() {
        let signal = TestToneSource.Signal.beeps(frequency: 1000, level: -20, duration: 0.1)
        let inBeep = (0..<4800).map { abs(TestToneSource.sampleValue(at: 48_000 * 3 + Int64($0), signal: signal, sampleRate: 48_000)) }
        let afterBeep = (4800..<48_000).map { TestToneSource.sampleValue(at: 48_000 * 3 + Int64($0), signal: signal, sampleRate: 48_000) }
        #expect(abs(Double(inBeep.max() ?? 0) - 0.1) < 0.001)
        #expect(afterBeep.allSatisfy { $0 == 0 })
    }
}
