import Foundation
import Testing
import MediaSupport
import CFFmpeg
import StudioCore
import StudioSystem
@testable import Encoding
import TestSupport

/// A render node whose driver encodes H.264, if this machine has one (probed once).
let vaapiDevice: VAAPIDevice? = VAAPIProbe.probe().device
let noVAAPI: Comment = "no VAAPI render node with H.264 encode on this machine"

private func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "studio-vaapi-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

@Suite struct VAAPIProbeTests {
    @Test func renderNodesAreTheSortedRenderDEntries() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["renderD129", "card0", "renderD128", "by-path"] {
            #expect(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data()))
        }
        #expect(VAAPIProbe.renderNodes(in: directory) == [directory + "/renderD128", directory + "/renderD129"])
        #expect(VAAPIProbe.renderNodes(in: directory + "/missing") == [])
    }

    @Test func aMissingNodeIsReportedAsNoRenderNode() throws {
        let result = VAAPIProbe.probe(renderNode: "/dev/dri/renderD999")
        let failure = try #require(result.failure)
        #expect(failure.reason == .noRenderNode && failure.renderNode == "/dev/dri/renderD999")
        #expect(failure.description == "no VAAPI render node at /dev/dri/renderD999")
        #expect(result.device == nil)
    }

    @Test func aFileThatIsNotADRMDeviceFailsInitialization() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/renderD128"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("not a device".utf8)))
        let failure = try #require(VAAPIProbe.probe(renderNode: path).failure)
        guard case .initFailed(let text) = failure.reason else {
            Issue.record("expected initFailed, got \(failure.reason)"); return
        }
        #expect(text == "vaGetDisplayDRM(\(path)): not a DRM device")
        #expect(failure.description.hasPrefix("VAAPI initialization failed on \(path): "))
    }

    @Test(.enabled(if: getuid() != 0, "root opens any node, so EACCES cannot be provoked"))
    func anUnreadableNodeIsPermissionDenied() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/renderD128"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(), attributes: [.posixPermissions: 0]))
        let failure = try #require(VAAPIProbe.probe(renderNode: path).failure)
        #expect(failure.reason == .permissionDenied)
    }

    @Test func permissionDeniedTellsHowToJoinTheRenderGroup() {
        let text = VAAPIProbeFailure(renderNode: "/dev/dri/renderD128", reason: .permissionDenied).description
        #expect(text.contains("/dev/dri/renderD128"))
        #expect(text.contains("`render` group"))
        #expect(text.contains("sudo usermod -aG render $USER"))
        #expect(text.contains("log out and in again"))
    }

    @Test(.enabled(if: VAAPIProbe.renderNodes().isEmpty, "this machine has render nodes"))
    func withoutRenderNodesTheProbeSaysSo() throws {
        let failure = try #require(VAAPIProbe.probe().failure)
        #expect(failure.reason == .noRenderNode && failure.renderNode == nil)
        #expect(failure.description.contains("/dev/dri/renderD*"))
    }

    @Test(.enabled(if: vaapiDevice != nil, noVAAPI))
    func aUsableNodeReportsDriverAndProfiles() throws {
        let device = try #require(vaapiDevice)
        #expect(device.renderNode.hasPrefix("/dev/dri/renderD"))
        #expect(!device.driver.isEmpty && !device.profiles.isEmpty)
        #expect(VAAPIProbe.probe(renderNode: device.renderNode) == .usable(device), "probing again finds the same")
    }
}

@Suite struct EncoderSelectionTests {
    @Test(.enabled(if: vaapiDevice == nil, "this machine has a usable VAAPI node"))
    func autoFallsBackToX264WithTheProbesReason() throws {
        var settings = smallSettings
        settings.encoder = .auto
        let selection = try makeEncoder(for: settings)
        #expect(selection.encoder is X264Encoder && selection.encoder.name == "libx264")
        let reason = try #require(selection.fallbackReason)
        #expect(reason.contains("render node"), "reason: \(reason)")
    }

    @Test(.enabled(if: vaapiDevice == nil, "this machine has a usable VAAPI node"))
    func vaapiWithoutHardwareIsAClearError() throws {
        var settings = smallSettings
        settings.encoder = .vaapi
        #expect {
            _ = try makeEncoder(for: settings)
        } throws: { error in
            let text = String(describing: error)
            return error is VAAPIUnavailableError && text.contains("vaapi was requested") && text.contains("render node")
        }
    }

    @Test func vaapiOnAMissingNodeNamesTheNode() throws {
        var settings = smallSettings
        settings.encoder = .vaapi
        settings.renderNode = "/dev/dri/renderD999"
        let error = try #require(throws: VAAPIUnavailableError.self) { try makeEncoder(for: settings) }
        #expect(error.reason == "no VAAPI render node at /dev/dri/renderD999")
    }

    @Test func autoOnAMissingNodeFallsBackWithThatReason() throws {
        var settings = smallSettings
        settings.encoder = .auto
        settings.renderNode = "/dev/dri/renderD999"
        let selection = try makeEncoder(for: settings)
        #expect(selection.encoder.name == "libx264")
        #expect(selection.fallbackReason == "no VAAPI render node at /dev/dri/renderD999")
    }

    @Test func theVAAPIEncoderFailsCleanlyOnAMissingNode() throws {
        let error = try #require(throws: FFmpegError.self) {
            try VAAPIEncoder(settings: smallSettings, renderNode: "/dev/dri/renderD999")
        }
        #expect(error.call == "av_hwdevice_ctx_create(vaapi, /dev/dri/renderD999)")
        #expect(error.code < 0 && !error.message.isEmpty)
    }

    @Test func faultInjectionWrapsTheChosenEncoder() throws {
        var settings = smallSettings
        settings.faultInjectionAfterFrames = 3
        let encoder = try #require(try makeEncoder(for: settings).encoder as? FaultInjectingEncoder)
        #expect(encoder.wrapped is X264Encoder && encoder.failAfterFrames == 3)
        for n in 0..<3 { _ = try encoder.encode(frame(n), pts: pts(n), forceKeyframe: false) }
        #expect(throws: FaultInjectingEncoder.InjectedFault.self) {
            try encoder.encode(frame(3), pts: pts(3), forceKeyframe: false)
        }
    }

    @Test func theSoftwareFallbackIsPlainX264() throws {
        var settings = smallSettings
        settings.encoder = .vaapi
        settings.faultInjectionAfterFrames = 0
        let encoder = try makeSoftwareFallback(for: settings)
        #expect(encoder is X264Encoder)
        #expect(encoder.settings.encoder == .x264 && encoder.settings.faultInjectionAfterFrames == nil)
        #expect(encoder.settings.width == 320 && encoder.settings.bitRate == 400_000)
        #expect(encoder.settings.keyframeIntervalFrames == settings.keyframeIntervalFrames)
    }

    @Test func i420BecomesNV12WithInterleavedChroma() throws {
        let input = SyntheticMedia.frame(width: 64, height: 36, yuv: (16, 100, 200), index: 3)
        let u = input.plane(1).assumingMemoryBound(to: UInt8.self)
        let v = input.plane(2).assumingMemoryBound(to: UInt8.self)
        u[0] = 1; v[0] = 2; u[input.planes[1].stride + 31] = 3; v[input.planes[2].stride * 17 + 31] = 4
        let output = try #require(av_frame_alloc())
        defer { var optional: UnsafeMutablePointer<AVFrame>? = output; av_frame_free(&optional) }
        output.pointee.format = AV_PIX_FMT_NV12.rawValue
        output.pointee.width = 64
        output.pointee.height = 36
        #expect(av_frame_get_buffer(output, 0) >= 0)
        VAAPIEncoder.copyI420(input, toNV12: output)
        let luma = try #require(cff_frame_plane(output, 0))
        let chroma = try #require(cff_frame_plane(output, 1))
        let (lumaLine, chromaLine) = (Int(output.pointee.linesize.0), Int(output.pointee.linesize.1))
        let source = input.plane(0).assumingMemoryBound(to: UInt8.self)
        for row in 0..<36 {
            for column in 0..<64 {
                #expect(luma[row * lumaLine + column] == source[row * input.planes[0].stride + column])
            }
        }
        #expect(Array(UnsafeBufferPointer(start: chroma, count: 4)) == [1, 2, 100, 200])
        #expect(chroma[chromaLine + 62] == 3 && chroma[chromaLine + 63] == 200)
        #expect(chroma[chromaLine * 17 + 62] == 100 && chroma[chromaLine * 17 + 63] == 4)
    }
}

@Suite(.serialized) struct EncoderFallbackTests {
    /// The server's path: the selection's encoder fails (fault injection), the stage switches to
    /// `makeSoftwareFallback(for:)`.
    @Test func anInjectedFaultSwitchesToX264OnTheNextFrame() throws {
        var settings = smallSettings
        settings.encoder = .auto
        settings.faultInjectionAfterFrames = 10
        let selection = try makeEncoder(for: settings)
        let events = CollectingSink()
        let collector = ItemCollector()
        let stage = VideoEncodingStage(encoder: selection.encoder, queueCapacity: 64, events: events,
                                       choiceReason: selection.fallbackReason,
                                       fallback: { [settings] in try makeSoftwareFallback(for: settings) }, deliver: collector.deliver)
        for n in 0..<30 { #expect(stage.submit(frame(n), pts: pts(n))) }
        stage.finish()

        let formats = collector.formats
        #expect(formats.map(\.generation) == [0, 1])
        #expect(formats.last?.encoderName == "libx264" && formats.last?.extradata.first == 1)
        let packets = collector.packets
        #expect(packets.map(\.pts) == (0..<30).map(pts), "timestamps continuous")
        #expect(packets.suffix(20).allSatisfy { $0.generation == 1 } && packets.prefix(10).allSatisfy { $0.generation == 0 })
        #expect(packets.count == 30 && packets[10].isKeyframe && nalTypes(packets[10].data).contains(5), "IDR after the switch")
        let fallback = try #require(events.events(.encoderFallback).first)
        #expect(events.events(.encoderFallback).count == 1)
        #expect(fallback.details["from"] == selection.encoder.name && fallback.details["to"] == "libx264")
        #expect(fallback.details["encoder"] == "libx264" && fallback.details["generation"] == "1")
        #expect(fallback.details["reason"] == "injected encoder fault at frame 10")
        #expect(stage.statistics.encoderName == "libx264" && stage.statistics.generation == 1)
        let chosen = try #require(events.events(.encoderChosen).first)
        #expect(chosen.details["fallback_reason"] == selection.fallbackReason, "the auto choice's reason is on encoder_chosen")
        #expect(chosen.details["generation"] == "0")
    }

    @Test(.enabled(if: vaapiDevice != nil, noVAAPI))
    func aFailingVAAPIEncoderFallsBackToX264() throws {
        var settings = smallSettings
        settings.encoder = .vaapi
        settings.faultInjectionAfterFrames = 5
        let selection = try makeEncoder(for: settings)
        #expect(selection.encoder.name == "h264_vaapi")
        let events = CollectingSink()
        let collector = ItemCollector()
        let stage = VideoEncodingStage(encoder: selection.encoder, queueCapacity: 64, events: events,
                                       fallback: { [settings] in try makeSoftwareFallback(for: settings) }, deliver: collector.deliver)
        for n in 0..<20 { #expect(stage.submit(frame(n), pts: pts(n))) }
        stage.finish()
        #expect(collector.formats.map(\.encoderName) == ["h264_vaapi", "libx264"])
        #expect(collector.packets.map(\.pts) == (0..<20).map(pts))
        let fallback = try #require(events.events(.encoderFallback).first)
        #expect(fallback.details["from"] == "h264_vaapi" && fallback.details["to"] == "libx264")
    }
}

@Suite(.serialized) struct VAAPIEncoderTests {
    @Test(.enabled(if: vaapiDevice != nil, noVAAPI))
    func encodesMP4StylePacketsWithFixedGOPAndForcedIDR() throws {
        let device = try #require(vaapiDevice)
        let encoder = try VAAPIEncoder(settings: smallSettings, renderNode: device.renderNode, lowPower: device.lowPower)
        let description = encoder.streamDescription
        #expect(description.encoderName == "h264_vaapi" && description.extradata.first == 1, "avcC extradata")
        var packets: [EncodedPacket] = []
        for n in 0..<90 { packets += try encoder.encode(frame(n), pts: pts(n), forceKeyframe: n == 75) }
        packets += try encoder.flush()
        #expect(packets.map(\.pts) == (0..<90).map(pts))
        #expect(packets.allSatisfy { !AVCFormat.isAnnexB($0.data) && !nalTypes($0.data).isEmpty }, "length-prefixed")
        let keyframes = packets.enumerated().filter { $0.element.isKeyframe }.map(\.offset)
        #expect(keyframes == [0, 60, 75], "GOP of 60 frames plus the forced one")
        for index in keyframes { #expect(nalTypes(packets[index].data).contains(5), "frame \(index) is an IDR") }
    }
}
