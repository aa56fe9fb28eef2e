import StudioCore
import StudioConfig
import Encoding

/// The program encoder's settings, one place for `serve` and `doctor`: the program format with the
/// configured bit rate, preset, keyframe interval and encoder choice.
func programEncoderSettings(_ configuration: StudioConfiguration) -> VideoEncoderSettings {
    var settings = VideoEncoderSettings(
        format: configuration.program, bitRate: configuration.video.bitRate, preset: configuration.video.preset,
        keyframeIntervalSeconds: configuration.video.keyframeIntervalSeconds)
    settings.encoder = VideoEncoderChoice(configuration.video.encoder)
    return settings
}

/// What to do about an encoder too slow for the program format.
let slowEncoderFix = "a smaller or slower program (e.g. --program 1280x720@30), a faster preset (--preset ultrafast), or a GPU with VAAPI (--encoder auto)"

extension EncoderSpeed {
    /// What the program loses at this speed, for the operator.
    var consequence: String {
        measuredFPS >= neededFPS
            ? "little headroom: with the cameras' conversions and ISO encoders beside it, frames may be dropped"
            : "about \(Int(((1 - measuredFPS / neededFPS) * 100).rounded())) % of the program's frames would be dropped"
    }

    var eventDetails: [String: String] {
        func oneDecimal(_ value: Double) -> String { String((value * 10).rounded() / 10) }
        return ["by": "start probe", "encoder": encoderName, "size": "\(width)x\(height)",
                "measured_fps": oneDecimal(measuredFPS), "needed_fps": oneDecimal(neededFPS)]
    }
}

extension Doctor {
    /// Measures the program encoder (as `serve` would choose it) on camera-like pictures for at most
    /// `budgetSeconds`: ok when it runs `EncoderSpeed.headroom` times the program's rate, a warning
    /// below that, a problem when it does not open at all.
    static func encoderSpeed(_ settings: VideoEncoderSettings, budgetSeconds: Double = 0.5) -> Check {
        let format = "\(settings.width)x\(settings.height)@\(describe(settings.frameRate.doubleValue))"
        do {
            let speed = try SpeedProbe.measure(settings, budgetSeconds: budgetSeconds)
            var details = speed.eventDetails
            details["by"] = nil
            return speed.keepsUp
                ? Check("encoder", .ok, speed.summary, details: details)
                : Check("encoder", .warning, "\(speed.summary): \(speed.consequence)", fix: slowEncoderFix, details: details)
        } catch {
            return Check("encoder", .problem, "the program encoder does not open for \(format): \(error)",
                         fix: "check `studio doctor`'s ffmpeg and gpu lines; \(slowEncoderFix)")
        }
    }
}
