import StudioCore

/// How far one file's transcode is: frames done, program time done out of the file's span, wall time.
/// `studio transcode` draws it as a bar on a terminal and as plain lines otherwise (`line`, parsed by
/// the tests and by scripts).
public struct TranscodeProgress: Sendable, Equatable {
    /// The input's file name (not its directory).
    public var file: String
    public var frames: Int
    /// Media time done (the last frame's end less the file's start) and the file's span, in seconds
    /// (nil when the container does not say: a killed server's file).
    public var doneSeconds: Double
    public var totalSeconds: Double?
    /// Wall-clock seconds since the transcode of this file began.
    public var elapsedSeconds: Double
    public var finished: Bool

    public init(file: String, frames: Int, doneSeconds: Double, totalSeconds: Double?, elapsedSeconds: Double, finished: Bool) {
        self.file = file
        self.frames = frames
        self.doneSeconds = doneSeconds
        self.totalSeconds = totalSeconds
        self.elapsedSeconds = elapsedSeconds
        self.finished = finished
    }

    /// 0...1, or nil without a known span (1 once finished).
    public var fraction: Double? {
        if finished { return 1 }
        guard let totalSeconds, totalSeconds > 0 else { return nil }
        return min(1, max(0, doneSeconds / totalSeconds))
    }

    /// Media seconds per wall second (2.0: twice real time); nil until measurable.
    public var speed: Double? {
        guard elapsedSeconds > 0.05, doneSeconds > 0 else { return nil }
        return doneSeconds / elapsedSeconds
    }

    /// Seconds left at the speed so far; nil without a span or a speed.
    public var etaSeconds: Double? {
        guard !finished, let totalSeconds, let speed, speed > 0 else { return finished ? 0 : nil }
        return max(0, totalSeconds - doneSeconds) / speed
    }

    /// Whole percent, or nil.
    public var percent: Int? { fraction.map { Int(($0 * 100).rounded(.down)) } }

    /// `session-1-cam1.mkv 40% 120 frames 2.31x ETA 0:03` (`?%`, `?x`, `ETA ?` while unknown; `done` at the end).
    public var line: String {
        let percentText = percent.map { "\($0)%" } ?? "?%"
        let speedText = speed.map { Self.decimal($0) + "x" } ?? "?x"
        let tail = finished ? "done in \(Self.clock(elapsedSeconds))" : "ETA \(etaSeconds.map(Self.clock) ?? "?")"
        return "\(file) \(percentText) \(frames) frames \(speedText) \(tail)"
    }

    /// `session-1-cam1.mkv [#########-----------]  45%  135 frames  2.31x  ETA 0:03`, for a terminal
    /// (redrawn in place with a carriage return).
    public func bar(width: Int = 30) -> String {
        let filled = fraction.map { Int(($0 * Double(width)).rounded(.down)) } ?? 0
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let percentText = percent.map { String($0) } ?? "?"
        let padded = String(repeating: " ", count: max(0, 3 - percentText.count)) + percentText
        let speedText = speed.map { Self.decimal($0) + "x" } ?? "?x"
        let tail = finished ? "done in \(Self.clock(elapsedSeconds))" : "ETA \(etaSeconds.map(Self.clock) ?? "?")"
        return "\(file) [\(bar)] \(padded)%  \(frames) frames  \(speedText)  \(tail)"
    }

    /// `m:ss` (`h:mm:ss` from an hour).
    public static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        let (hours, minutes, secs) = (whole / 3600, whole / 60 % 60, whole % 60)
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(secs))" : "\(minutes):\(two(secs))"
    }

    /// Two decimals.
    static func decimal(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
