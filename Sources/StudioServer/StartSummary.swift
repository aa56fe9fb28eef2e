import StudioCore
import StudioConfig
import Capture

/// What `studio serve` says once it is on air, so that an operator at a bare PC reads what it found and
/// where the program goes without asking: the cameras, the microphones (which one is up) or why the
/// program is silence, the console's address, the recording; and a warning when the program goes
/// nowhere (neither streamed nor recorded: a show that nobody will ever see). The outputs have their
/// own lines (`output NAME: URL`).
struct StartSummary {
    struct Camera {
        var name: String
        var displayName: String
        var backend: BackendName
    }

    struct Microphone {
        var name: String
        var displayName: String?
        var muted: Bool
    }

    var cameras: [Camera]
    /// The real camera backends looked at (none with test-pattern cameras alone).
    var backends: [String]
    var audioSource: AudioSource
    var microphones: [Microphone]
    var silenceReason: String?
    var consoleURL: String?
    var streams: Bool
    /// The program's recording file, when recording.
    var recording: String?

    /// The lines, in the order an operator asks: what comes in, where to watch, where it goes.
    var lines: [String] {
        var lines: [String] = []
        if cameras.isEmpty {
            lines.append(backends.isEmpty ? "cameras: none (--backends none): the program shows a slate"
                         : "cameras: none found (looked at \(backends.joined(separator: ", "))); one plugged in is taken as it appears")
        } else {
            lines.append("cameras: " + cameras.map { "\($0.name) (\($0.displayName), \($0.backend.rawValue))" }.joined(separator: ", "))
        }
        switch audioSource {
        case .tone: lines.append("audio: the test tone (1 kHz, -20 dBFS; --audio microphones for the real ones)")
        case .microphones, .pipewireAll, .pipewire:
            if !microphones.isEmpty {
                lines.append("microphones: " + microphones.map { "\($0.name) (\($0.displayName ?? $0.name), \($0.muted ? "muted" : "up"))" }
                    .joined(separator: ", ") + " (`studio audio` raises one)")
            }
        case .silence: break
        }
        if let silenceReason { lines.append("audio: the program is silence: \(silenceReason)") }
        if let consoleURL { lines.append("console: \(consoleURL)") }
        if let recording { lines.append("recording: \(recording)") }
        if !streams && recording == nil {
            lines.append("warning: the program is neither streamed nor recorded: give it a destination (--rtmp URL, or outputs: in the config) "
                         + "or a recording (--record DIR); until then it is seen only in the console")
        }
        return lines
    }
}

extension StartSummary {
    /// The console's address: the HTTP API's, at its root.
    static func consoleURL(_ settings: HTTPSettings, port: UInt16) -> String {
        "\(settings.scheme)://\(settings.listen.authority(port: port))/"
    }
}
