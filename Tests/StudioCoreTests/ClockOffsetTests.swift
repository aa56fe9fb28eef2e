import Testing
import StudioCore

/// The node's clock offset from round trips to the switcher: a fake transport with a node clock shifted
/// by a known offset and one-way delays that differ each way.
@Suite struct ClockOffsetTests {
    /// A round trip at true time `at` (µs): the node's clock runs `shift` ahead of the switcher's; the
    /// request takes `out` µs, the answer `back` µs.
    static func sample(at: Int64, shift: Int64, out: Int64, back: Int64) -> ClockSample {
        ClockSample(sent: at + shift, server: at + out, received: at + out + back + shift)
    }

    @Test func theShortestRoundTripOfTheWindowIsKept() throws {
        var estimator = ClockOffsetEstimator(window: 4)
        #expect(estimator.estimate == nil)
        // Slow and lopsided answers first (a queue on the way), then one quick one.
        for (out, back) in [(40_000, 2_000), (3_000, 30_000), (25_000, 25_000)] as [(Int64, Int64)] {
            estimator.add(Self.sample(at: 1_000_000, shift: 3_000_000, out: out, back: back))
        }
        estimator.add(Self.sample(at: 2_000_000, shift: 3_000_000, out: 300, back: 500))
        let estimate = try #require(estimator.estimate)
        #expect(estimate.measured)
        // Off by half the difference of the two ways at most: (500 - 300) / 2 = 100 µs.
        #expect(abs(estimate.offsetMilliseconds! - (-3000)) <= 0.1, "\(estimate)")
        #expect(estimate.roundTripMilliseconds == 0.8)
        // Four slower samples push the quick one out of the window: the best of the rest is used.
        for _ in 0..<4 { estimator.add(Self.sample(at: 3_000_000, shift: 3_000_000, out: 9_000, back: 1_000)) }
        #expect(estimator.estimate?.roundTripMilliseconds == 10)
        #expect(estimator.estimate.map { abs($0.offsetMilliseconds! - (-3000) - 4) < 0.001 } == true, "\(String(describing: estimator.estimate))")
    }

    @Test func anAnswerBeforeItsRequestIsRefused() {
        var estimator = ClockOffsetEstimator()
        let taken = estimator.add(ClockSample(sent: 10_000, server: 0, received: 9_000))
        #expect(!taken)
        #expect(estimator.estimate == nil)
    }

    @Test func aCaptureTimeSurvivesThePacketAndEmulationPrevention() throws {
        // Times full of zero bytes: emulation prevention has to escape them.
        for (time, offset, measured) in [(Int64(0x0000_0003_0000_0000), Int64(-3_000_000), true), (1_765_000_000_000_000, 0, false), (-1, 0x0000_0100, true)] {
            let stamp = CaptureTimeSEI(captureTime: time, offset: offset, offsetMeasured: measured)
            #expect(!stamp.nalUnit.dropFirst().windowed3.contains { $0 == [0, 0, 0] || $0 == [0, 0, 1] || $0 == [0, 0, 2] })
            // An access unit as an encoder gives it: SPS, PPS, then an IDR slice (4-byte lengths).
            let nals: [[UInt8]] = [[0x67, 0x42, 0, 0x1e], [0x68, 0xce, 0x38, 0x80], [0x65, 0x88, 0x84, 0, 0, 0x21]]
            let packet: [UInt8] = nals.flatMap { nal -> [UInt8] in [0, 0, 0, UInt8(nal.count)] + nal }
            let stamped = stamp.inserted(intoLengthPrefixed: packet)
            #expect(stamped.count == packet.count + 4 + stamp.nalUnit.count)
            // As the switcher's demuxer gives it: Annex B, start codes instead of lengths.
            let annexB = Self.annexB(stamped)
            let found = annexB.withUnsafeBufferPointer { CaptureTimeSEI.find(inAnnexB: $0) }
            #expect(found == stamp)
            // The SEI sits before the slice: after it nothing is looked at.
            let late = Self.annexB(packet) + [0, 0, 0, 1] + stamp.nalUnit
            #expect(late.withUnsafeBufferPointer { CaptureTimeSEI.find(inAnnexB: $0) } == nil)
        }
    }

    @Test func anotherUUIDIsNotOurs() {
        var nal = CaptureTimeSEI(captureTime: 5, offset: 0, offsetMeasured: false).nalUnit
        nal[3] ^= 0xff
        let bytes: [UInt8] = [0, 0, 0, 1] + nal + [0, 0, 0, 1, 0x65, 0x88]
        #expect(bytes.withUnsafeBufferPointer { CaptureTimeSEI.find(inAnnexB: $0) } == nil)
    }

    static func annexB(_ lengthPrefixed: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], position = 0
        while position + 4 <= lengthPrefixed.count {
            let length = lengthPrefixed[position..<position + 4].reduce(0) { $0 << 8 | Int($1) }
            out += [0, 0, 0, 1] + lengthPrefixed[(position + 4)..<(position + 4 + length)]
            position += 4 + length
        }
        return out
    }
}

private extension Collection where Element == UInt8 {
    var windowed3: [[UInt8]] {
        let bytes = Array(self)
        return bytes.count < 3 ? [] : (0...(bytes.count - 3)).map { Array(bytes[$0..<$0 + 3]) }
    }
}
