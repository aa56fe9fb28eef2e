import Foundation
import StudioCore
import Encoding
import StudioConfig

/// What a start checks and prepares before anything is created on disk, so a refused start leaves no
/// database or recording file behind: the socket group, the file modes, the program's encoders (and
/// whether the machine sustains the format), the recording directory. `StudioServer.init` runs it first
/// and wires the pipeline with what it found.
struct StartChecks {
    /// The socket group's id, when the config names one.
    let group: UInt32?
    /// The program encoder's settings and the encoder opened for them (VAAPI or x264, and why not VAAPI).
    let videoSettings: VideoEncoderSettings
    let selection: EncoderSelection
    /// The encoder's measured speed, for formats above the default's pixel rate (see `SpeedProbe`).
    let speed: EncoderSpeed?
    let audioEncoder: AACEncoder

    init(options: ServerOptions, log: ServerLog, probeSeconds: Double) throws {
        let configuration = options.configuration
        group = try configuration.socketGroup.map { name in
            guard let gid = SystemGroups.id(ofGroup: name) else {
                throw ServerError("socket_group \(name): no such group (create it with `groupadd \(name)` and add the operators to it)")
            }
            return gid
        }
        // What the server creates from here on (and SQLite and libavformat for it) is its owner's
        // alone, or readable by the socket group, whatever umask it was started with.
        FileModes.restrict(sharedWithGroup: group != nil)
        // The program encoder: VAAPI where the machine has it (auto) or where asked (vaapi: an error
        // if it cannot be used), else x264, with the reason kept for `status` and the event log.
        var videoSettings = programEncoderSettings(configuration)
        videoSettings.faultInjectionAfterFrames = options.injectEncoderFaultAfterFrames
        self.videoSettings = videoSettings
        selection = try makeEncoder(for: videoSettings)
        if let reason = selection.fallbackReason { log.info("hardware encoding unavailable, using x264: \(reason)") }
        // A format beyond what the encoder sustains here (3840x2160@240 on a laptop) is said at start,
        // not found out from dropped frames: measured before the media path starts (half a second of
        // encoding), and only for formats above the default's pixel rate (see SpeedProbe).
        speed = SpeedProbe.worthMeasuringAtStart(configuration.program)
            ? try? SpeedProbe.measure(videoSettings, budgetSeconds: probeSeconds) : nil
        audioEncoder = try AACEncoder(format: .program, bitRate: configuration.audio.bitRate)
        if let directory = configuration.recordDirectory {
            try RecordingDirectory.prepare(directory, mode: FileModes.directory(sharedWithGroup: group != nil))
        }
    }
}
