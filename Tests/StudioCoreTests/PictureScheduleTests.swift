import Testing
import StudioCore

/// `PictureSchedule`: the picture for a time is the last one from then or before; a replacement keeps
/// the last `kept` pictures from before its first, for a tick composed late; `PlayerSpec`'s times.
@Suite struct PictureScheduleTests {
    static func frame(_ number: UInt64) -> VideoFrame {
        VideoFrame.allocate(format: .i420, width: 16, height: 16, captureTime: number, sequence: number)
    }

    @Test func eachTimeGetsTheLastPictureFromThenOrBefore() {
        let schedule = PictureSchedule()
        #expect(schedule.picture(at: 100) == nil)
        schedule.replace(with: (1...5).map { PictureSchedule.Entry(from: $0 * 100, frame: Self.frame($0)) })
        #expect(schedule.picture(at: 99) == nil)
        #expect(schedule.picture(at: 100)?.sequence == 1 && schedule.picture(at: 299)?.sequence == 2 && schedule.picture(at: 10_000)?.sequence == 5)
        // Published on from 400: 1...3 stay behind it (at most `kept`), 4 and 5 are replaced.
        schedule.replace(with: (4...9).map { PictureSchedule.Entry(from: $0 * 100, frame: Self.frame($0 + 10)) })
        #expect(schedule.picture(at: 250)?.sequence == 2 && schedule.picture(at: 450)?.sequence == 14)
        schedule.replace(with: (20...21).map { PictureSchedule.Entry(from: $0 * 100, frame: Self.frame($0)) })
        #expect(schedule.picture(at: 650)?.sequence == 16 && schedule.picture(at: 550) == nil, "only the last \(PictureSchedule.kept) kept")
        // From 0 (a cued player): nothing before it stays.
        schedule.replace(with: [PictureSchedule.Entry(from: 0, frame: Self.frame(99))])
        #expect(schedule.picture(at: 2_100)?.sequence == 99)
    }

    @Test func timesIntoAnItemAreSecondsOrMinutesAndSeconds() {
        #expect(PlayerSpec.milliseconds(at: "12.5") == 12_500 && PlayerSpec.milliseconds(at: "0") == 0)
        #expect(PlayerSpec.milliseconds(at: "1:30") == 90_000 && PlayerSpec.milliseconds(at: "1:02:03.25") == 3_723_250)
        for bad in ["", "soon", "-1", "1:60", "1:75:00", "1:2:3:4", "1::2", "inf"] { #expect(PlayerSpec.milliseconds(at: bad) == nil, "\(bad)") }
    }
}
