import Foundation
import StudioCore

/// Where one output goes: a network URL of an `OutputKind` (RTMP as FLV, SRT as MPEG-TS) or a recording
/// file (Matroska unless the path ends in `.flv`).
public struct OutputDestination: Sendable, Hashable {
    public var name: String
    public var url: String
    /// The row of the output-kind table that `url` belongs to. A URL of a scheme no kind takes is
    /// refused before it gets here (the config, `studio output add`); one that does is written as a file.
    public var kind: OutputKind
    /// A network kind: written by a `NetworkDestination` (reconnects to the same URL), anything else by a
    /// `RecordingDestination` (the next file `NAME-partK` after a write error).
    public var isNetwork: Bool { kind.isNetwork }
    /// libavformat muxer name: the kind's (`flv`, `mpegts`), `flv` for `.flv` files, `matroska` otherwise.
    public var containerFormat: String { kind.container(for: url) }

    public init(name: String, url: String) {
        self.name = name
        self.url = url
        kind = OutputKind.of(url) ?? .file
    }

    /// The URL with its secrets masked as its kind says; file paths as they are.
    public var maskedURL: String { kind.masked(url) }

    /// Removes the URL and its secrets from free text (error messages from lower layers).
    public func redact(_ text: String) -> String { kind.redact(text, url: url) }
}

/// How an output behaves under congestion and failure.
public struct OutputPolicy: Sendable, Hashable {
    public var queueLimits: OutputQueue.Limits
    /// A network read/write that makes no progress for this long fails (libavformat `rw_timeout`, and
    /// the interrupt callback's per-operation deadline).
    public var ioTimeoutSeconds: Double
    /// Connecting (TCP + RTMP handshake + publish) may take this long.
    public var connectTimeoutSeconds: Double
    /// Reconnect backoff: first delay, doubling up to `maxBackoffSeconds`, forever until stopped.
    public var initialBackoffSeconds: Double
    public var maxBackoffSeconds: Double
    /// While waiting for the first keyframe of a connection, ask the encoder again this often.
    public var keyframeRequestIntervalSeconds: Double

    public init(queueLimits: OutputQueue.Limits = .init(), ioTimeoutSeconds: Double = 1, connectTimeoutSeconds: Double = 5,
                initialBackoffSeconds: Double = 1, maxBackoffSeconds: Double = 15, keyframeRequestIntervalSeconds: Double = 2) {
        self.queueLimits = queueLimits
        self.ioTimeoutSeconds = ioTimeoutSeconds
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.initialBackoffSeconds = initialBackoffSeconds
        self.maxBackoffSeconds = maxBackoffSeconds
        self.keyframeRequestIntervalSeconds = keyframeRequestIntervalSeconds
    }

    /// Delay before reconnect attempt `attempt` (1-based): initial * 2^(attempt-1), capped.
    public func backoff(attempt: Int) -> Double {
        min(maxBackoffSeconds, initialBackoffSeconds * pow(2, Double(max(0, min(attempt - 1, 30)))))
    }
}

public enum OutputState: String, Sendable, Codable, CaseIterable {
    case connecting
    case connected
    case reconnecting
    case stopped
    case failed
}

/// What an output has done so far. URLs and errors in here are masked.
public struct OutputStatistics: Sendable, Equatable {
    public var name: String
    public var maskedURL: String
    public var state: OutputState = .connecting
    /// Bytes handed to the protocol (socket or file) over all connections.
    public var bytesSent: Int64 = 0
    public var packetsSent: Int = 0
    public var droppedVideo: Int = 0
    public var droppedAudio: Int = 0
    /// Successful reconnections (the first connection is not one).
    public var reconnectCount: Int = 0
    public var reconnectAttempts: Int = 0
    public var lastError: String?
    public var connectedSince: Date?
    /// Program time (ms) of the first video keyframe sent on the current connection.
    public var firstProgramMillisecondsOfConnection: Int64?
    /// Program time (ms) of the last packet written.
    public var lastProgramMilliseconds: Int64?
    /// The file being written (recordings; changes when the video format changes mid-stream).
    public var currentFile: String?
    /// While waiting to try again after a failure: when the next attempt starts (CLOCK_MONOTONIC ns).
    public var nextAttemptAt: UInt64?
    /// While waiting to try again: seconds until the next attempt, on the output's clock (see `nextAttemptAt`).
    public var secondsToNextAttempt: Double?
    /// Bits per second written over the last second or two (0 while not connected).
    public var bitsPerSecond: Int = 0
    /// The program video's latency budget over the last frames written (ms, by stage), updated once a
    /// second; empty until known (and for packets without `FrameTimes`).
    public var latency: [LatencyStage: LatencyQuantiles] = [:]

    public init(name: String, maskedURL: String) {
        self.name = name
        self.maskedURL = maskedURL
    }
}
