import Control

// `audio` as the server and the CLI both know it: its name, arguments, reply and routes. The server's
// `AudioCommands.Audio` implements it; `studio audio` calls it.

/// An input (or `master`) and the settings to change; no input: list.
public struct AudioArguments: Codable, Sendable {
    /// An input's name, or `master`; nil: list.
    public var input: String?
    public var gain: Level?
    public var mute: Bool?
    public var pan: Pan?
    public var delay: Double?
    public var fade: Double?
    /// A camera or scene name, or `none`.
    public var follow: String?
    public var ceiling: Double?

    public init(input: String? = nil) { self.input = input }

    /// Settings only an input has (the master takes gain and ceiling).
    public var setsInputOnly: Bool { mute != nil || pan != nil || delay != nil || fade != nil || follow != nil }

    /// A gain: a number of dB, or `-inf` / `off` (a fader all the way down), sent as `"-inf"`.
    public struct Level: Codable, Sendable {
        public var decibels: Double

        public init(decibels: Double) { self.decibels = decibels }

        public init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            if let number = try? value.decode(Double.self) { decibels = number; return }
            let text = try value.decode(String.self).lowercased()
            if text == "-inf" || text == "off" { decibels = -.infinity; return }
            guard let number = Double(text) else {
                throw DecodingError.dataCorruptedError(in: value, debugDescription: "must be a number of dB or -inf, got \"\(text)\"")
            }
            decibels = number
        }

        public func encode(to encoder: any Encoder) throws {
            var value = encoder.singleValueContainer()
            if decibels == -.infinity { try value.encode("-inf") } else { try value.encode(decibels) }
        }
    }

    /// A pan: -1..+1, or `mono` (both channels summed to the middle).
    public enum Pan: Codable, Sendable {
        case position(Double)
        case mono

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) { self = .position(number); return }
            let text = try container.decode(String.self).lowercased()
            if text == "mono" { self = .mono; return }
            guard let number = Double(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "must be -1..+1 or mono, got \"\(text)\"")
            }
            self = .position(number)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .mono: try container.encode("mono")
            case .position(let value): try container.encode(value)
            }
        }
    }
}

public enum AudioSignatures {
    public enum Audio: CommandSignature {
        public typealias Arguments = AudioArguments
        public typealias Reply = AudioReply
        public static let name = "audio"
        public static let summary = "the program audio's inputs (gain, mute, pan, delay, follow, levels) and master (gain, ceiling, loudness); with an input, sets it"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/audio")
        public static let otherHTTPRoutes: [ControlHTTPRoute] = [.post("/api/v1/audio/{input}")]
        public static let positionalArguments = ["gain"]
    }
}
