import CFFmpeg
import Foundation
import Testing
@testable import Capture
import StudioCore
import StudioSystem
import TestSupport

/// A network camera's decoding (`PullVideoDecoder`), from a real publisher (ffmpeg, an SRT listener
/// sending MPEG-TS): nobody sees it, so only its reference pictures are decoded (the B-frames skipped,
/// counted); it is seen, so every picture from the next packet on, and its newest picture is good for a
/// cut at once; HEVC decodes like H.264; a codec libavcodec lacks is named; VAAPI is used where the
/// machine has it and said why not where it has not.
@Suite(.serialized) struct NetworkDecodeTests {
    /// The jitter buffer's target of the camera under test.
    static let latency = 200

    /// ffmpeg sending 320x180 at 30 fps as an SRT listener on `port`: H.264 with two B-frames between
    /// references that nothing refers to (`b-pyramid=none`, no adaptive choice), or HEVC.
    static func publish(port: Int, hevc: Bool = false, directory: URL) throws -> ChildProcess {
        let video = hevc
            ? ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "bframes=2:b-adapt=0:b-pyramid=0:keyint=30:log-level=error"]
            : ["-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-x264-params", "b-adapt=0:b-pyramid=none:keyint=30"]
        return try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=30",
        ] + video + ["-pix_fmt", "yuv420p", "-f", "mpegts", "srt://127.0.0.1:\(port)?mode=listener&latency=120000"], outputDirectory: directory)
    }

    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-netdecode-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The camera's published pictures' hand-out times over `seconds` (repeats of the frame sync included).
    static func handOuts(_ camera: NetworkPullCamera, seconds: Double) -> [UInt64] {
        var times: [UInt64] = []
        var version = camera.frames.latest().version
        let end = MonotonicClock.now() + UInt64(seconds * 1e9)
        while MonotonicClock.now() < end {
            let next = camera.frames.waitForNewer(than: version, timeoutSeconds: Double(end &- MonotonicClock.now()) / 1e9)
            guard next.version > version, let frame = next.value else { continue }
            version = next.version
            times.append(frame.arrivalTime)
        }
        return times
    }

    @Test func anUnseenCameraDecodesOnlyItsReferencePicturesAndEveryOneOnceSeen() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try NginxRTMP.freePort()
        let publisher = try Self.publish(port: port, directory: directory)
        defer { _ = publisher.stop() }
        let camera = NetworkPullCamera(pull: NetworkPull(name: "far", url: "srt://127.0.0.1:\(port)?latency=120000", latencyMilliseconds: Self.latency),
                                       id: "far", log: { _ in })
        let demand = try #require(camera.demand)
        demand.set(.seen, false)
        #expect(demand.demand == .idle)
        camera.start()
        defer { camera.stop() }
        #expect(waitUntil(seconds: 30, every: 0.05) { camera.statistics.framesDecodedFull >= 30 }, "\(camera.network?.summary ?? ""); \(publisher.errorText())")

        // Unseen: one picture in three decoded (the references), the B-frames counted as skipped.
        let before = camera.statistics
        let reduced = Self.handOuts(camera, seconds: 2)
        let after = camera.statistics
        let decoded = after.framesDecodedFull - before.framesDecodedFull, skipped = after.framesNotDecoded - before.framesNotDecoded
        #expect(camera.network?.decoder?.pictures == "reference", "\(camera.network?.decoder.map(\.summary) ?? "no decoder")")
        #expect(decoded >= 15 && decoded <= 25 && skipped >= 35 && skipped <= 45, "in 2 s: \(decoded) decoded, \(skipped) skipped")
        #expect(reduced.count >= 15 && reduced.count <= 25, "\(reduced.count) pictures handed out in 2 s")

        // Seen: its newest picture is good for a cut at once (no take waits for the next one), every
        // picture is decoded from the next packet on, and hand-outs reach the full rate once the
        // buffer's reference-only pictures are out.
        let rise = MonotonicClock.now()
        demand.set(.seen, true)
        #expect(demand.hasFullPicture)
        let seenBefore = camera.statistics
        let full = Self.handOuts(camera, seconds: 2)
        let seenAfter = camera.statistics
        #expect(camera.network?.decoder?.pictures == "all")
        #expect(seenAfter.framesNotDecoded - seenBefore.framesNotDecoded <= 2, "skipped after the rise: \(seenAfter.framesNotDecoded - seenBefore.framesNotDecoded)")
        #expect(seenAfter.framesDecodedFull - seenBefore.framesDecodedFull >= 54, "decoded in 2 s once seen: \(seenAfter.framesDecodedFull - seenBefore.framesDecodedFull)")
        // The first hand-out after which ten in a row come a frame apart (30 fps: under 50 ms).
        let gaps = zip(full.dropFirst(), full).map { $0 &- $1 }
        let steady = gaps.indices.first { start in gaps[start...].prefix(10).count == 10 && gaps[start...].prefix(10).allSatisfy { $0 < 50_000_000 } }
        let fullRateAfter = steady.map { Double(full[$0] &- rise) / 1e6 }
        print("network decode: full-rate hand-outs \(fullRateAfter.map { String(format: "%.0f ms", $0) } ?? "never") after the rise (buffer target \(Self.latency) ms)")
        #expect(fullRateAfter.map { $0 <= Double(Self.latency) + 100 } == true, "full rate \(fullRateAfter.map { "\($0) ms" } ?? "never") after the rise")
    }

    /// HEVC decodes like H.264, its non-reference pictures skipped while unseen.
    @Test func hevcIsDecodedAndSkippedLikeH264() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try NginxRTMP.freePort()
        let publisher = try Self.publish(port: port, hevc: true, directory: directory)
        defer { _ = publisher.stop() }
        let camera = NetworkPullCamera(pull: NetworkPull(name: "far", url: "srt://127.0.0.1:\(port)?latency=120000", latencyMilliseconds: Self.latency),
                                       id: "far", log: { _ in })
        camera.demand?.set(.seen, false)
        camera.start()
        defer { camera.stop() }
        #expect(waitUntil(seconds: 30, every: 0.05) { camera.statistics.framesNotDecoded >= 20 && camera.statistics.framesDecodedFull >= 10 },
                "\(camera.statistics); \(camera.network?.summary ?? ""); \(publisher.errorText())")
        let decoder = camera.network?.decoder
        #expect(decoder?.name == "hevc" && decoder?.hardware == nil && decoder?.threads == NetworkDecoding.defaultThreads, "\(String(describing: decoder))")
        #expect(camera.network?.streams.contains("hevc 320x180") == true, "\(camera.network?.streams ?? "")")
    }

    /// A video codec this libavcodec knows but cannot decode (H.266/VVC in FFmpeg 5.1) is refused with
    /// its name; so is one it does not know at all.
    @Test func aCodecTheDecoderLacksIsNamed() throws {
        let parameters = try #require(avcodec_parameters_alloc())
        var owned: UnsafeMutablePointer<AVCodecParameters>? = parameters
        defer { avcodec_parameters_free(&owned) }
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = AV_CODEC_ID_VVC
        parameters.pointee.width = 320
        parameters.pointee.height = 180
        #expect(avcodec_find_decoder(AV_CODEC_ID_VVC) == nil, "this libavcodec decodes VVC: pick another codec it lacks")
        do {
            _ = try PullVideoDecoder(parameters: parameters, name: "vvc", decoding: NetworkDecoding())
            Issue.record("a decoder was made for VVC")
        } catch {
            #expect(error.description.contains("libavcodec has no vvc decoder"), "\(error)")
        }
    }

    /// Asked to decode on a render node that does not exist, the decoder says so and decodes in
    /// software; a driver without the codec is said too.
    @Test func vaapiThatCannotBeOpenedFallsBackToSoftwareWithTheReason() throws {
        let parameters = try #require(avcodec_parameters_alloc())
        var owned: UnsafeMutablePointer<AVCodecParameters>? = parameters
        defer { avcodec_parameters_free(&owned) }
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = AV_CODEC_ID_H264
        parameters.pointee.width = 320
        parameters.pointee.height = 180
        let missing = try PullVideoDecoder(parameters: parameters, name: "h264",
                                           decoding: NetworkDecoding(hardware: .vaapi(renderNode: "/dev/dri/renderD999", codecs: ["h264"])))
        #expect(missing.status.hardware == nil && missing.status.softwareReason?.contains("/dev/dri/renderD999") == true, "\(missing.status)")
        #expect(missing.status.threads == NetworkDecoding.defaultThreads && missing.status.threadType == "slice")
        let lacking = try PullVideoDecoder(parameters: parameters, name: "h264",
                                           decoding: NetworkDecoding(hardware: .vaapi(renderNode: "/dev/dri/renderD999", codecs: ["hevc"])))
        #expect(lacking.status.softwareReason == "the VAAPI driver on /dev/dri/renderD999 does not decode h264", "\(lacking.status)")
    }

    /// A codec whose every picture stands alone (MJPEG) has nothing to skip: it says `all` pictures.
    @Test func anIntraOnlyCodecIsNeverSaidToSkip() throws {
        let parameters = try #require(avcodec_parameters_alloc())
        var owned: UnsafeMutablePointer<AVCodecParameters>? = parameters
        defer { avcodec_parameters_free(&owned) }
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.width = 320
        parameters.pointee.height = 180
        parameters.pointee.codec_id = AV_CODEC_ID_MJPEG
        let mjpeg = try PullVideoDecoder(parameters: parameters, name: "mjpeg", decoding: NetworkDecoding())
        mjpeg.skipsNonReference = true
        #expect(!mjpeg.skipsNonReference && mjpeg.status.pictures == "all")
        parameters.pointee.codec_id = AV_CODEC_ID_H264
        let h264 = try PullVideoDecoder(parameters: parameters, name: "h264", decoding: NetworkDecoding())
        h264.skipsNonReference = true
        #expect(h264.skipsNonReference && h264.status.pictures == "reference")
    }
}
