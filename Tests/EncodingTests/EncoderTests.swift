import Testing
import MediaSupport
import StudioCore
import StudioSystem
import Encoding
import TestSupport

@Suite struct X264EncoderTests {
    private func encode(frames: Int, forceAt: Set<Int> = [], settings: VideoEncoderSettings = smallSettings) throws
        -> (encoder: X264Encoder, packets: [EncodedPacket]) {
        let encoder = try X264Encoder(settings: settings)
        var packets: [EncodedPacket] = []
        for n in 0..<frames {
            let frame = SyntheticMedia.frame(width: settings.width, height: settings.height,
                                             yuv: n < frames / 2 ? SyntheticMedia.red : SyntheticMedia.blue, index: n)
            packets += try encoder.encode(frame, pts: MediaTime(count: Int64(n), rate: settings.frameRate),
                                          forceKeyframe: forceAt.contains(n))
        }
        packets += try encoder.flush()
        return (encoder, packets)
    }

    @Test func producesOnePacketPerFrameWithMonotonicTimestampsAndAvcC() throws {
        let (encoder, packets) = try encode(frames: 45)
        #expect(packets.count == 45)
        #expect(packets.first?.isKeyframe == true)
        for (n, packet) in packets.enumerated() {
            #expect(packet.pts == MediaTime(count: Int64(n), rate: Rational(30)))
            #expect(packet.dts == packet.pts, "no B-frames: dts equals pts")
            #expect(packet.duration == MediaTime(count: 1, rate: Rational(30)))
            #expect(!packet.data.isEmpty)
        }
        #expect(zip(packets, packets.dropFirst()).allSatisfy { $0.dts < $1.dts })
        let avcC = encoder.streamDescription.extradata
        #expect(avcC.count > 8)
        #expect(avcC.first == 0x01, "avcC configurationVersion")
        #expect(avcC[4] & 0x03 == 3, "4-byte NAL lengths")
        #expect(encoder.streamDescription.width == 320 && encoder.streamDescription.height == 180)
        #expect(encoder.streamDescription.encoderName == "libx264")
        // Global header: the first IDR carries no in-band SPS/PPS, only the slice (plus SEI).
        #expect(nalTypes(packets[0].data).contains(5))
    }

    @Test func keyframeEveryTwoSecondsAndNowhereElse() throws {
        let (_, packets) = try encode(frames: 130)
        let keyframes = packets.enumerated().filter { $0.element.isKeyframe }.map { $0.offset }
        #expect(keyframes == [0, 60, 120])
        for index in keyframes { #expect(nalTypes(packets[index].data).contains(5), "keyframe \(index) is an IDR") }
    }

    @Test func forcedKeyframeIsAnIDRAtThatFrame() throws {
        let (_, packets) = try encode(frames: 50, forceAt: [17])
        let keyframes = packets.enumerated().filter { $0.element.isKeyframe }.map { $0.offset }
        #expect(keyframes == [0, 17])
        #expect(nalTypes(packets[17].data).contains(5))
        #expect(!nalTypes(packets[16].data).contains(5))
    }

    @Test func rejectsFramesOfTheWrongSize() throws {
        let encoder = try X264Encoder(settings: smallSettings)
        let wrong = SyntheticMedia.frame(width: 640, height: 360, yuv: SyntheticMedia.grey)
        #expect(throws: FFmpegError.self) { try encoder.encode(wrong, pts: .zero, forceKeyframe: false) }
        // Still usable afterwards.
        let right = SyntheticMedia.frame(width: 320, height: 180, yuv: SyntheticMedia.grey)
        #expect(try encoder.encode(right, pts: .zero, forceKeyframe: false).count == 1)
    }

    @Test func badPresetIsAClearError() {
        var settings = smallSettings
        settings.preset = "no-such-preset"
        #expect {
            _ = try X264Encoder(settings: settings)
        } throws: { error in
            guard let error = error as? FFmpegError else { return false }
            return error.call.contains("avcodec_open2") && error.code < 0 && !error.message.isEmpty
        }
    }

    @Test func oddSizesAndZeroRatesAreRefusedBeforeAnythingOpens() {
        var odd = smallSettings
        odd.width = 321
        #expect {
            _ = try X264Encoder(settings: odd)
        } throws: { error in
            (error as? FFmpegError).map { $0.call == "X264Encoder" && $0.message.contains("321x") } ?? false
        }
        var still = smallSettings
        still.bitRate = 0
        #expect {
            _ = try X264Encoder(settings: still)
        } throws: { error in
            (error as? FFmpegError).map { $0.call == "X264Encoder" && $0.message.contains("bit rate 0") } ?? false
        }
    }

    @Test func makeEncoderBuildsX264() throws {
        let selection = try makeEncoder(for: smallSettings)
        let encoder = selection.encoder
        #expect(encoder is X264Encoder && selection.fallbackReason == nil)
        #expect(encoder.name == "libx264")
        #expect(encoder.streamDescription.kind == .video)
    }
}

@Suite struct AACEncoderTests {
    @Test func packetsAre1024SamplesWithExactTimestamps() throws {
        let encoder = try AACEncoder(format: .program, bitRate: 128_000)
        #expect(encoder.frameSize == 1024)
        let description = encoder.streamDescription
        #expect(description.codec == .aac && description.sampleRate == 48_000 && description.channels == 2)
        #expect(description.extradata.count >= 2, "AudioSpecificConfig")
        // AAC-LC (object type 2), 48 kHz (index 3), stereo.
        #expect(description.extradata[0] >> 3 == 2)
        let start: Int64 = 48_000  // the audio timeline starts one second in
        var next = start
        var packets: [EncodedPacket] = []
        // Odd chunk sizes, 0.5 s in total.
        for size in [700, 333, 1500, 960, 7, 4000, 2000, 8500, 4000] {
            packets += try encoder.encode(SyntheticMedia.audio(firstSample: next, count: size))
            next += Int64(size)
        }
        let total = Int(next - start)  // 24000
        #expect(encoder.bufferedSamples == total % 1024)
        packets += try encoder.flush()
        let rate = Rational(48_000)
        #expect(packets.count >= total / 1024)
        for (k, packet) in packets.enumerated() {
            // libavcodec puts the encoder delay (1024 samples of priming) before the first input sample.
            #expect(packet.pts == MediaTime(count: start + Int64(k) * 1024 - 1024, rate: rate))
            #expect(packet.dts == packet.pts)
            #expect(packet.isKeyframe)
            if k < total / 1024 { #expect(packet.duration == MediaTime(count: 1024, rate: rate)) }
        }
    }

    @Test func gapsAreFilledAndOverlapsSkippedSoTimestampsStayOnTheSampleGrid() throws {
        let encoder = try AACEncoder()
        var packets = try encoder.encode(SyntheticMedia.audio(firstSample: 0, count: 1000))
        // 200 samples missing, then 100 samples repeated.
        packets += try encoder.encode(SyntheticMedia.audio(firstSample: 1200, count: 1000))
        packets += try encoder.encode(SyntheticMedia.audio(firstSample: 2100, count: 2000))
        #expect(encoder.bufferedSamples == 4100 - 4 * 1024)
        packets += try encoder.flush()
        let rate = Rational(48_000)
        for (k, packet) in packets.enumerated() {
            #expect(packet.pts == MediaTime(count: Int64(k) * 1024 - 1024, rate: rate))
        }
    }

    @Test func aGapOfSecondsIsFilledWithSilenceSoTheStreamStaysContinuous() throws {
        // What the audio stage's queue may leave after a stall of the whole process: 5 s missing.
        let encoder = try AACEncoder()
        var packets = try encoder.encode(SyntheticMedia.audio(firstSample: 0, count: 4800))
        packets += try encoder.encode(SyntheticMedia.audio(firstSample: 4800 + 240_000, count: 4800))
        packets += try encoder.flush()
        let rate = Rational(48_000)
        #expect(packets.count >= (4800 + 240_000 + 4800) / 1024)
        for (k, packet) in packets.enumerated() {
            #expect(packet.pts == MediaTime(count: Int64(k) * 1024 - 1024, rate: rate), "packet \(k)")
        }
    }

    @Test func wrongFormatIsRejected() throws {
        let encoder = try AACEncoder()
        let mono = SyntheticMedia.audio(firstSample: 0, count: 100, format: AudioFormat(sampleRate: 44_100, channels: 1))
        #expect(throws: FFmpegError.self) { try encoder.encode(mono) }
    }
}

@Suite struct AVCFormatTests {
    @Test func annexBBecomesLengthPrefixedAndAvcC() {
        let sps: [UInt8] = [0x67, 0x64, 0x00, 0x1f, 0xac]
        let pps: [UInt8] = [0x68, 0xee, 0x3c]
        let idr: [UInt8] = [0x65, 0x88, 0x00, 0x00, 0x03, 0x01]  // contains an emulation-prevented 00 00 03
        let annexB = [0, 0, 0, 1] + sps + [0, 0, 1] + pps + [0, 0, 0, 1] + idr
        #expect(AVCFormat.nalUnits(annexB: annexB).map(Array.init) == [sps, pps, idr])
        let prefixed = AVCFormat.lengthPrefixed(annexB: annexB)
        #expect(prefixed == [0, 0, 0, 5] + sps + [0, 0, 0, 3] + pps + [0, 0, 0, 6] + idr)
        #expect(AVCFormat.lengthPrefixed(annexB: prefixed) == prefixed, "already length-prefixed stays as is")
        let record = AVCFormat.avcC(fromAnnexB: annexB)
        #expect(record == [1, 0x64, 0x00, 0x1f, 0xff, 0xe1, 0, 5] + sps + [1, 0, 3] + pps)
        #expect(AVCFormat.avcC(fromAnnexB: [0, 0, 1] + idr) == nil)
    }
}
