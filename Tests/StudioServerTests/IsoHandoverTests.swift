import Foundation
import Testing
import Capture
import Encoding
import StudioCore
import StudioSystem
import TestSupport
@testable import StudioServer
@testable import IsoRecording

/// A passthrough ISO whose camera stops sending JPEGs (switched to a mode its device offers raw only,
/// or back from a loss sending raw frames) encodes the raw frames into its next file, and copies the
/// JPEGs again into the one after when they come back: no stretch of the show goes unrecorded. Real
/// cameras (a PipeWire camera made for an MJPEG node, not started, its JPEGs offered through its tap as
/// its callback offers them; a test-pattern camera), real x264, AAC and Matroska, checked with ffprobe.
@Suite(.serialized) struct IsoHandoverTests {
    @Test func aPassthroughISOEncodesWhileItsCameraSendsRawFramesAndCopiesJPEGsAgainAfter() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-iso-handover-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("session-1-cam1.mkv").path

        let events = HubEvents()
        let mjpeg = IsoPassthroughTests.pipeWireCamera(name: "cam1", offer: IsoPassthroughTests.mjpegOffer)
        let raw = try TestPatternCamera(id: CameraID("cam1"), format: CameraFormat(pixelFormat: .i420, width: 640, height: 360, frameRate: Rational(30)),
                                        identity: "pipewire:cam1")
        // The JPEG the MJPEG camera sends: the pattern's picture, compressed as a webcam would.
        raw.start()
        defer { raw.stop() }
        var problem = ""
        guard let encoder = JPEGEncoder(width: 640, height: 360, rate: Rational(30), problem: &problem),
              raw.frames.waitForNewer(than: 0, timeoutSeconds: 5).value != nil, let picture = raw.frames.latest().value,
              let jpeg = encoder.encode(picture) else {
            Issue.record("no JPEG to send: \(problem)")
            return
        }
        var settings = IsoRecorder.Settings(preset: "ultrafast", bitRate: 400_000, keyframeIntervalSeconds: 1,
                                            fallbackRate: Rational(30), staleAfterSeconds: 0.5)
        settings.mode = .passthrough
        let iso = IsoRecorder(camera: mjpeg, path: path, settings: settings, events: events)
        let audio = AudioEncodingStage(encoder: try AACEncoder(format: .program, bitRate: 64_000), events: events,
                                       deliver: { iso.deliverAudio($0) })
        let tone = TestToneSource(deliver: { _ = audio.submit($0) })
        let origin = MonotonicClock.now()
        tone.start(origin: origin)
        iso.start(origin: origin)

        /// Sends JPEGs at the camera's rate until `count` more frames are in the file (or 30 s pass).
        func sendJPEGs(until count: Int) -> Bool {
            let deadline = MonotonicClock.now() + 30_000_000_000
            while iso.statistics.framesEncoded < count, MonotonicClock.now() < deadline {
                jpeg.withUnsafeBytes {
                    mjpeg.compressedFrames.offer(codec: .mjpeg, bytes: $0, captureTime: MonotonicClock.now(), width: 640, height: 360)
                }
                MonotonicClock.sleep(seconds: 1.0 / 30)
            }
            return iso.statistics.framesEncoded >= count
        }

        #expect(sendJPEGs(until: 30))
        let copied = iso.statistics
        #expect(copied.mode == .passthrough && copied.codec == "mjpeg" && copied.encoderName == "none (passthrough)", "\(copied)")

        // Back from a loss sending raw frames: encoded into the next file.
        iso.rebind(to: raw)
        #expect(waitUntil(seconds: 30, every: 0.1) { iso.statistics.framesEncoded >= copied.framesEncoded + 30 })
        let encoded = iso.statistics
        #expect(encoded.mode == .encode && encoded.codec == "h264" && encoded.encoderName == "libx264", "\(encoded)")
        #expect(encoded.generation == 1 && encoded.width == 640, "\(encoded)")

        // JPEGs again: copied into the file after that.
        iso.rebind(to: mjpeg)
        #expect(sendJPEGs(until: encoded.framesEncoded + 30))
        let again = iso.statistics
        #expect(again.mode == .passthrough && again.codec == "mjpeg" && again.generation == 2, "\(again)")
        iso.stopEncoding()
        tone.stop()
        audio.finish()
        iso.output.stop(timeoutSeconds: 5)

        let files = ["session-1-cam1.mkv", "session-1-cam1-g1.mkv", "session-1-cam1-g2.mkv"].map { directory.appendingPathComponent($0) }
        let probed = try files.map { try MediaProbe.probe($0) }
        #expect(probed.map { $0.video?.codecName } == ["mjpeg", "h264", "mjpeg"], "\(probed.map(\.streams))")
        #expect(probed.allSatisfy { $0.audio?.codecName == "aac" }, "every file carries the program audio")
        #expect(probed.allSatisfy { $0.videoPackets.count >= 20 }, "\(probed.map(\.videoPackets.count)) frames")
        // One timeline: each file starts after the one before ends, within a second (the handover's gap).
        let spans = probed.map { ($0.videoPackets.compactMap(\.ptsMilliseconds).min() ?? -1, $0.videoPackets.compactMap(\.ptsMilliseconds).max() ?? -1) }
        for (before, after) in zip(spans, spans.dropFirst()) {
            #expect(after.0 > before.1 && after.0 - before.1 < 1000, "files' spans in ms: \(spans)")
        }
        #expect(events.all.filter { $0.kind == .error }.isEmpty, "\(events.all.filter { $0.kind == .error })")
    }
}
