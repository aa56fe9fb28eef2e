import Foundation
import StudioCore
import StudioSystem
import Capture
import Encoding
import StudioConfig
import IsoRecording

// How the server records each camera on its own (the IsoRecording module): which cameras, in which
// mode, with which encoder, into which file, as the config says.

extension StudioServer {
    /// ISO recordings: each camera encoded and recorded on its own, beside the program recording,
    /// including cameras plugged in mid-show (see `CameraHub`). Nil when not recording.
    static func isoFactory(options: ServerOptions, session: Int64, events: ServerEventSink, log: ServerLog,
                                   audioFormat: StreamDescription) -> CameraHub.IsoFactory? {
        let configuration = options.configuration
        guard let directory = configuration.recordDirectory else { return nil }
        // A keyframe at least every second: an editor's cuts and seeks land near one, and a killed
        // server's ISO files keep all but the last second or two (they are flushed at keyframes).
        let settings = IsoRecorder.Settings(preset: configuration.cameras.isoPreset, bitRate: configuration.video.bitRate,
                                            keyframeIntervalSeconds: min(1, configuration.video.keyframeIntervalSeconds),
                                            fallbackRate: configuration.program.frameRate,
                                            staleAfterSeconds: options.cameraLossTimeoutSeconds)
        let cameraSettings = configuration.cameras
        let programEncoder = configuration.video.encoder, fault = options.injectEncoderFaultAfterFrames
        return { camera in
            let asked = cameraSettings.isoRecording(forIdentity: camera.identity, displayName: camera.displayName)
            guard asked != .off else { return nil }
            var settings = settings
            let mode = IsoMode.resolve(asked: asked, camera: camera)
            if let warning = mode.warning { log.info("warning: \(warning)") }
            settings.mode = mode.mode
            settings.encoder = VideoEncoderChoice(cameraSettings.isoEncoder(forIdentity: camera.identity, displayName: camera.displayName,
                                                                            program: programEncoder))
            settings.faultInjectionAfterFrames = fault
            let path = RecordingDirectory.isoPath(in: directory, session: session, camera: camera.id)
            let iso = IsoRecorder(camera: camera, path: path, settings: settings, events: events, report: { log.info($0) })
            // Its files become `recordings` rows once they hold media (see `RecordingRows`).
            events.recordings.register(output: iso.output.destination.name, camera: camera.id)
            // The program audio goes into every ISO file; a recorder made mid-show first gets
            // the audio stream's description, then packets from the next one on.
            iso.deliverAudio(.format(audioFormat))
            let how = settings.mode == .passthrough
                ? "passthrough: the camera's own \((camera as? any CompressedFrameSource)?.compressedCodec?.rawValue ?? "compressed") frames, not re-encoded"
                : "encoder \(settings.encoder.rawValue), x264 preset \(settings.preset)"
            log.info("ISO \(camera.id.name): \(path) (\(how))")
            return iso
        }
    }
}

extension IsoMode {
    /// The mode for a camera whose config says `asked` (`cameras.iso`, a pin's `iso:`): passthrough for
    /// a camera that sends compressed frames unless `encode` is asked, encode otherwise. A camera that
    /// sends raw frames cannot pass them through: asked to, it is encoded and `warning` says why.
    static func resolve(asked: IsoRecording, camera: any Camera) -> (mode: IsoMode, warning: String?) {
        let codec = (camera as? any CompressedFrameSource)?.compressedCodec
        switch asked {
        case .encode, .off:
            return (.encode, nil)
        case .auto:
            return (codec == nil ? .encode : .passthrough, nil)
        case .passthrough:
            guard codec == nil else { return (.passthrough, nil) }
            let sends = camera.currentFormat.map { " (it sends raw \($0.pixelFormat.rawValue))" } ?? ""
            return (.encode, "\(camera.id.name) is set to iso: passthrough, but it does not send compressed frames\(sends): its ISO is encoded instead")
        }
    }
}
