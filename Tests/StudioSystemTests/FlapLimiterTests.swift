import Testing
import StudioSystem

/// `FlapLimiter`: a subject going and coming back at any rate writes a bounded number of events, its first
/// loss and final state exactly (times as arguments: the injected clock of a pure type).
@Suite struct FlapLimiterTests {
    typealias Limiter = FlapLimiter<Int>
    static let second: UInt64 = 1_000_000_000

    /// The events written (their numbers) and the summaries, for transitions every `step` ns from `start`.
    static func run(_ limiter: inout Limiter, from start: UInt64, count: Int, step: UInt64, firstNumber: Int = 0)
        -> (written: [Int], summaries: [Limiter.Summary]) {
        var written: [Int] = [], summaries: [Limiter.Summary] = []
        for i in 0..<count {
            for output in limiter.note(i % 2 == 0 ? .lost : .back, firstNumber + i, at: start + UInt64(i) * step) {
                switch output {
                case .write(let n): written.append(n)
                case .summary(let s): summaries.append(s)
                }
            }
        }
        return (written, summaries)
    }

    static func split(_ outputs: [Limiter.Output]) -> (written: [Int], summaries: [Limiter.Summary]) {
        var written: [Int] = [], summaries: [Limiter.Summary] = []
        for output in outputs {
            switch output {
            case .write(let n): written.append(n)
            case .summary(let s): summaries.append(s)
            }
        }
        return (written, summaries)
    }

    @Test func aFewOutagesAMinuteAreWrittenAsTheyCome() {
        var limiter = Limiter()
        // A loss and a return every 20 s for ten minutes: 6 transitions a minute, the allowance.
        let (written, summaries) = Self.run(&limiter, from: Self.second, count: 60, step: 10 * Self.second)
        #expect(written == Array(0..<60) && summaries.isEmpty)
        #expect(Self.split(limiter.due(at: 1000 * Self.second)).written.isEmpty)
    }

    @Test func aCameraFlappingTenTimesASecondIsCoalescedEndingInItsRealState() {
        var limiter = Limiter()
        let start = Self.second
        let step = Self.second / 20  // lost and back ten times a second
        // 90 s of it: 1,800 transitions, ending with a return (odd count: the last is `back`).
        let count = 1800
        var (written, summaries) = Self.run(&limiter, from: start, count: count, step: step)
        // The allowance as it came, then the episode's first loss (number 6) at once; a summary after a minute.
        #expect(written == [0, 1, 2, 3, 4, 5, 6], "\(written)")
        #expect(summaries.count == 1 && summaries.first?.ended == false, "\(summaries)")
        let last = start + UInt64(count - 1) * step
        // Not yet quiet for 10 s: nothing more; then the final return (the last transition) and the summary.
        #expect(Self.split(limiter.due(at: last + 9 * Self.second)).written.isEmpty)
        let end = Self.split(limiter.due(at: last + 10 * Self.second))
        written += end.written
        summaries += end.summaries
        #expect(end.written == [count - 1], "the last return, itself: \(end.written)")
        let final = summaries.last
        #expect(final?.ended == true && final?.isLost == false && final?.last == last)
        // Every transition past the allowance counted once in the summaries.
        #expect(summaries.map(\.lost).reduce(0, +) + summaries.map(\.back).reduce(0, +) == count - 6)
        // What was written pairs up: lost, back, lost, back...
        #expect(written.enumerated().allSatisfy { $0.offset % 2 == $0.element % 2 })
        #expect(limiter.flush().isEmpty, "nothing held after the episode")
    }

    @Test func anEpisodeEndingLostLeavesTheLossWrittenAndNoReturn() {
        var limiter = Limiter()
        let step = Self.second / 20
        // 101 transitions: the last is a loss.
        var (written, _) = Self.run(&limiter, from: Self.second, count: 101, step: step)
        #expect(written == [0, 1, 2, 3, 4, 5, 6])
        let end = Self.split(limiter.flush())
        written += end.written
        #expect(end.written.isEmpty && end.summaries.count == 1 && end.summaries[0].isLost, "\(end)")
        #expect(written.last.map { $0 % 2 == 0 } == true, "the last written is a loss: the camera is lost")
    }

    @Test func anHourOfFlappingWritesAboutOneEventAMinute() {
        var limiter = Limiter()
        let count = 36_000 * 2  // an hour, ten times a second
        let (written, summaries) = Self.run(&limiter, from: Self.second, count: count, step: Self.second / 20)
        #expect(written.count + summaries.count <= 6 + 1 + 60, "\(written.count) written, \(summaries.count) summaries")
        #expect(summaries.count >= 59)
    }
}
