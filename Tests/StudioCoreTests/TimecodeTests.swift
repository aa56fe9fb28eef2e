import Foundation
import Testing
import StudioCore

/// Program milliseconds to frames and SMPTE non-drop timecode, as the cut lists write them.
@Suite struct TimecodeTests {
    /// Every frame's program time (MediaTime's milliseconds, rounded down) maps back to that frame, at
    /// whole and fractional rates, for a day of frames.
    @Test(arguments: [Rational(25), Rational(30), Rational(30000, 1001), Rational(24000, 1001), Rational(60000, 1001), Rational(240)])
    func everyFramesMillisecondsMapBackToIt(rate: Rational) {
        let day = Int64(24 * 3600) * Int64(Timecode.base(rate))
        for frame in stride(from: Int64(0), to: day, by: 997) + [day - 1] {
            let milliseconds = MediaTime(count: frame, rate: rate).milliseconds
            #expect(FrameCount(milliseconds: milliseconds, rate: rate) == FrameCount(frame), "\(rate): frame \(frame) at \(milliseconds) ms")
        }
    }

    @Test func nonDropFrameTimecodeCountsAtTheNominalRate() {
        let ntsc = Rational(30000, 1001)
        #expect(Timecode.base(ntsc) == 30 && Timecode.base(Rational(24000, 1001)) == 24 && Timecode.base(Rational(25)) == 25)
        // 1800 frames at 29.97 are 60.06 s of program time but 00:01:00:00 of NDF timecode.
        #expect(Timecode.text(FrameCount(1800), rate: ntsc) == "00:01:00:00")
        #expect(FrameCount(milliseconds: 60_060, rate: ntsc) == FrameCount(1800))
        #expect(Timecode.text(FrameCount(0), rate: Rational(25)) == "00:00:00:00")
        #expect(Timecode.text(FrameCount(25 * 3661 + 24), rate: Rational(25)) == "01:01:01:24")
        #expect(Timecode.text(FrameCount(30 * 86_400 + 31), rate: Rational(30)) == "00:00:01:01", "hours wrap at 24")
        for text in ["00:00:00:00", "01:02:03:04", "23:59:59:29"] {
            #expect(Timecode.frames(text, rate: ntsc).map { Timecode.text($0, rate: ntsc) } == text)
        }
        for bad in ["00:00:00:30", "00:60:00:00", "24:00:00:00", "0:00:00:00", "00:00:00", "00:00:00;00", "aa:00:00:00"] {
            #expect(Timecode.frames(bad, rate: ntsc) == nil, "\(bad)")
        }
    }

    @Test func framesAreExactRationalSeconds() {
        #expect(FrameCount(300).seconds(at: Rational(30000, 1001)) == (300_300, 30_000))
        #expect(FrameCount(45).seconds(at: Rational(30)) == (45, 30))
        // Halfway between two frames rounds up; a wall-clock time (the slate's) lands on its nearest frame.
        #expect(FrameCount(milliseconds: 50, rate: Rational(10)) == FrameCount(1))
        #expect(FrameCount(milliseconds: 25_016, rate: Rational(30)) == FrameCount(750))
        #expect(FrameCount(milliseconds: 25_017, rate: Rational(30)) == FrameCount(751))
    }

    /// Drop-frame as SMPTE (and ffmpeg's `-timecode`) counts it: at 29.97 frames 0 and 1 of each minute but
    /// every tenth are skipped (4 at 59.94), so frame 1800 is 00:01:00;02 and frame 17982 is 00:10:00;00.
    @Test func dropFrameTimecodeSkipsTheFirstFramesOfEachMinuteButTheTenth() {
        let ntsc = Rational(30000, 1001)
        #expect(Timecode.smpte(FrameCount(1799), rate: ntsc) == "00:00:59;29")
        #expect(Timecode.smpte(FrameCount(1800), rate: ntsc) == "00:01:00;02")
        #expect(Timecode.smpte(FrameCount(17_982), rate: ntsc) == "00:10:00;00")
        #expect(Timecode.smpte(FrameCount(17_982 + 1800), rate: ntsc) == "00:11:00;02")
        #expect(Timecode.smpte(FrameCount(107_892), rate: ntsc) == "01:00:00;00", "an hour of 29.97 is 107892 frames")
        #expect(Timecode.smpte(FrameCount(3600), rate: Rational(60000, 1001)) == "00:01:00;04")
        #expect(Timecode.smpte(FrameCount(1800), rate: Rational(30)) == "00:01:00:00", "a whole rate is non-drop")
        #expect(Timecode.smpte(FrameCount(1440), rate: Rational(24000, 1001)) == "00:01:00:00", "23.976 has no drop-frame")
    }

    @Test func frameOfDayCountsFromTheLocalMidnight() throws {
        // 2026-12-07 12:00:00.5 UTC.
        let noon: Int64 = 1_796_644_800_500_000
        #expect(Timecode.frameOfDay(microseconds: noon, rate: Rational(30), timeZone: try #require(TimeZone(identifier: "UTC"))) == FrameCount(12 * 3600 * 30 + 15))
        #expect(Timecode.frameOfDay(microseconds: noon, rate: Rational(30), timeZone: try #require(TimeZone(secondsFromGMT: 3600))) == FrameCount(13 * 3600 * 30 + 15))
    }
}
