import Foundation
import StudioCore
import Control

// MARK: outputs

/// One destination of the program, as `outputs` and `status` list it. URLs and errors are masked.
public struct OutputView: Codable, Sendable {
    public var name: String
    /// The URL with its secrets masked; a recording's path.
    public var url: String
    /// Its row of the output-kind table: `rtmp`, `rtmps`, `srt`, `file`.
    public var kind: String
    /// `config` (`outputs:`, `--rtmp`), `record` (`--record`'s program recording) or `added` (mid-show);
    /// `node` for a capture node's sender's connection (`status`' `senders`).
    public var origin: String
    /// Who added it mid-show (`socket`, `http`); null for the start's.
    @Nullable public var addedBy: String?
    /// `connecting`, `connected`, `reconnecting`, `stopped` (also when the operator stopped it), `failed`.
    public var state: String
    public var bytesSent: Int
    public var packetsSent: Int
    public var droppedVideo: Int
    public var droppedAudio: Int
    public var reconnects: Int
    /// Connection attempts after a failure, successful or not (a server never reached counts here).
    public var reconnectAttempts: Int
    @Nullable public var lastError: String?
    /// Bits per second written over the last second or two (0 while not connected).
    public var bitsPerSecond: Int
    /// While waiting to try again after a failure: seconds until the next attempt; else nil.
    @Nullable public var nextAttemptInSeconds: Double?
    /// The program video's latency budget over the last frames written: p50 and p95 in ms by
    /// `LatencyStage` (empty until known).
    public var latency: [String: LatencyQuantiles] = [:]

    enum CodingKeys: String, CodingKey {
        case name, url, kind, origin, state, reconnects
        case addedBy = "added_by"
        case latency = "latency_ms"
        case reconnectAttempts = "reconnect_attempts"
        case bitsPerSecond = "bits_per_second"
        case nextAttemptInSeconds = "next_attempt_in_s"
        case bytesSent = "bytes_sent"
        case packetsSent = "packets_sent"
        case droppedVideo = "dropped_video"
        case droppedAudio = "dropped_audio"
        case lastError = "last_error"
    }

    public init(name: String, url: String, kind: String, origin: String, addedBy: String?, state: String, bytesSent: Int,
                packetsSent: Int, droppedVideo: Int, droppedAudio: Int, reconnects: Int, reconnectAttempts: Int,
                lastError: String? = nil, bitsPerSecond: Int, nextAttemptInSeconds: Double? = nil, latency: [String: LatencyQuantiles] = [:]) {
        self.name = name
        self.url = url
        self.kind = kind
        self.origin = origin
        self.addedBy = addedBy
        self.state = state
        self.bytesSent = bytesSent
        self.packetsSent = packetsSent
        self.droppedVideo = droppedVideo
        self.droppedAudio = droppedAudio
        self.reconnects = reconnects
        self.reconnectAttempts = reconnectAttempts
        self.lastError = lastError
        self.bitsPerSecond = bitsPerSecond
        self.nextAttemptInSeconds = nextAttemptInSeconds
        self.latency = latency
    }
}

/// `outputs`: every destination of the program, and how many more may be added.
public struct OutputsReply: Codable, Sendable {
    public var outputs: [OutputView]
    /// The most outputs at once (`--record`'s program recording aside).
    public var limit: Int

    public init(outputs: [OutputView], limit: Int) {
        self.outputs = outputs
        self.limit = limit
    }
}

/// `output`: the output as it is after the change.
public struct OutputReply: Codable, Sendable {
    /// `add`, `stop`, `start` or `remove`.
    public var action: String
    public var output: OutputView

    public init(action: String, output: OutputView) {
        self.action = action
        self.output = output
    }
}

// MARK: the commands

/// The program's outputs' commands, as the server and the CLI both know them.
public enum OutputSignatures {
    /// `outputs`: list them.
    public enum List: CommandSignature {
        public typealias Reply = OutputsReply
        public static let name = "outputs"
        public static let summary = "the program's outputs (network and recordings) with their kind, origin, state and counters"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/outputs")
    }

    /// `output`: add one, or stop, start, remove one.
    public enum Change: CommandSignature {
        public typealias Arguments = OutputChange
        public typealias Reply = OutputReply
        public static let name = "output"
        public static let summary = "adds an output mid-show (url, or record: true), or stops, starts or removes one; answers once done"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/outputs/{output}/{action}")
    }
}

/// `output`'s arguments: what to do to which output.
public struct OutputChange: Codable, Sendable, RequesterAware {
    /// What `output` does, one word each.
    public enum Action: String, CaseIterable, Sendable {
        case add, stop, start, remove

        /// What was done, as the CLI says it (`added backup ...`).
        public var done: String {
            switch self {
            case .add: "added"
            case .stop: "stopped"
            case .start: "started"
            case .remove: "removed"
            }
        }

        /// `add, stop, start or remove`.
        public static var names: String {
            let words = allCases.map(\.rawValue)
            return words.dropLast().joined(separator: ", ") + " or " + (words.last ?? "")
        }
    }

    public var output: String
    /// An `Action`'s word; anything else is refused naming the actions.
    public var action: String
    /// `add`: where to send the program (`rtmp://`, `rtmps://`, `srt://`).
    public var url: String?
    /// `add`: record the program into the server's recording directory instead.
    public var record: Bool?
    /// Where the request came from (`socket`, `http`): set by the server, never sent.
    public var requester = "socket"

    enum CodingKeys: String, CodingKey { case output, action, url, record }

    public init(output: String, action: String, url: String? = nil, record: Bool? = nil) {
        self.output = output
        self.action = action
        self.url = url
        self.record = record
    }
}
