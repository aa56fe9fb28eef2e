import Foundation
import StudioCore
import StudioSystem
import Capture
import Encoding
import StudioConfig
import IsoRecording
import TallyOut

// How the server records each camera on its own (the IsoRecording module): which cameras, in which
// mode, with which encoder, into which file, as the config says.

extension StudioServer {
    /// ISO recordings: each camera encoded and recorded on its own, beside the program recording,
    /// including cameras plugged in mid-show (see `CameraHub`). Nil when not recording.
    static func isoFactory(options: ServerOptions, session: Int64, switcherClock: SwitcherClockClient?, events: ServerEventSink, log: ServerLog,
                                   audioFormat: StreamDescription) -> CameraHub.IsoFactory? {
        let configuration = options.configuration
        guard let directory = configuration.recordDirectory else { return nil }
        // A keyframe at least every second: an editor's cuts and seeks land near one, and a killed
        // server's ISO files keep all but the last second or two (they are flushed at keyframes).
        var settings = IsoRecorder.Settings(preset: configuration.cameras.isoPreset, bitRate: configuration.video.bitRate,
                                            keyframeIntervalSeconds: min(1, configuration.video.keyframeIntervalSeconds),
                                            fallbackRate: configuration.program.frameRate,
                                            staleAfterSeconds: options.cameraLossTimeoutSeconds)
        settings.fileTags = isoTimeTags(wallClock: options.wallClock, switcherClock: switcherClock, isNode: configuration.node != nil)
        let cameraSettings = configuration.cameras
        let programEncoder = configuration.video.encoder, fault = options.injectEncoderFaultAfterFrames
        return { [settings] camera in
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

extension StudioServer {
    /// An ISO file's time base, as Matroska tags: `STUDIO_ORIGIN_US`, the wall-clock time (µs since
    /// 1970) of program time 0, which every ISO file of the session is timed from (a packet at `t` ms in
    /// the file was on this server's program at origin + t), and `STUDIO_TIME_BASE`: `switcher` on a node
    /// that had measured its clock against its switcher when the file was opened (its clock plus the
    /// offset), `node` on one that had not (its own clock), `local` on any other server (its own clock,
    /// which is the switcher's time base). And `TIMECODE`, as ffmpeg's `-timecode` writes it for Matroska:
    /// the SMPTE time of day (in `timeZone`, the machine's local time as `export --time-of-day` counts
    /// it) of the file's first frame (origin + its first packet's program time, on the same time base) at
    /// the file's frame rate, drop-frame (`;`) at 30000/1001 and 60000/1001.
    static func isoTimeTags(wallClock: WallClock, switcherClock: SwitcherClockClient?, isNode: Bool,
                            timeZone: TimeZone = .current) -> @Sendable (UInt64, MediaTime?, Rational) -> [String: String] {
        { origin, firstVideo, rate in
            let offset = switcherClock?.offsetMicroseconds
            let originMicroseconds = wallClock.time(ofMonotonic: origin) + (offset ?? 0)
            var tags = ["STUDIO_ORIGIN_US": String(originMicroseconds), "STUDIO_TIME_BASE": !isNode ? "local" : offset != nil ? "switcher" : "node"]
            if let firstVideo {
                let frame = Timecode.frameOfDay(microseconds: originMicroseconds + firstVideo.microseconds, rate: rate, timeZone: timeZone)
                tags["TIMECODE"] = Timecode.smpte(frame, rate: rate)
            }
            return tags
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
