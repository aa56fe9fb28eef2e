/// When one program frame passed each stage on its way to the wire, in CLOCK_MONOTONIC nanoseconds.
/// Stamped by the thread that does each stage (the program thread, the video encoder) and carried on
/// the frame's packet to the output, which closes the record when the packet is written: no shared
/// state, no lock on the media path. 0 = not known (a slate has no capture time).
public struct FrameTimes: Sendable, Equatable {
    /// When the picture was captured (the camera's `captureTime`).
    public var capture: UInt64 = 0
    /// When the program tick was due (`origin + pts`).
    public var due: UInt64 = 0
    /// When the program thread took the newest pictures for the tick.
    public var taken: UInt64 = 0
    /// When the program frame was composed and handed to the encoder's queue.
    public var composed: UInt64 = 0
    /// When the video encoder took it from its queue.
    public var encodeStart: UInt64 = 0
    /// When the encoder had its packet.
    public var encodeEnd: UInt64 = 0

    public init(capture: UInt64 = 0, due: UInt64 = 0, taken: UInt64 = 0, composed: UInt64 = 0,
                encodeStart: UInt64 = 0, encodeEnd: UInt64 = 0) {
        self.capture = capture
        self.due = due
        self.taken = taken
        self.composed = composed
        self.encodeStart = encodeStart
        self.encodeEnd = encodeEnd
    }
}

/// The stages of a program frame's way from the camera to the wire, in order. Each is the time between
/// two of `FrameTimes` (and the output's write), so together they add up to capture-to-wire.
public enum LatencyStage: String, CaseIterable, Sendable, Codable {
    /// The picture's age when the program took it: waiting for the program tick.
    case captureToTick = "capture_to_tick"
    /// How late the program thread took the pictures for its tick: its wake-up, and any wait for a
    /// picture captured before the tick that was still on its way (the switcher's on-air wait, at most a
    /// quarter frame interval).
    case tickWake = "tick_wake"
    /// Taking the pictures and composing the program frame.
    case compose
    /// The hand-off to the video encoder's thread (queue and wake-up).
    case encodeQueue = "encode_queue"
    /// The video encoder itself.
    case encode
    /// The hand-off to the output's thread (queue and wake-up).
    case outputQueue = "output_queue"
    /// The write: libavformat's muxer (and its interleaving) and the socket or file.
    case write
    /// From the tick's due time to the packet written: all of the above but `captureToTick`.
    case tickToWire = "tick_to_wire"
    /// From the picture's capture to its packet written: capture-to-wire for the program, capture-to-file
    /// for an ISO recording (whose packets know only their capture and, encoded, their encode).
    case captureToWritten = "capture_to_written"
    /// The program audio's way: from an audio packet's program time on the clock to written (the mixer's
    /// lag, the AAC encoder, the queues and the write). A player in sync waits for the later of the two.
    case audioToWire = "audio_to_wire"

    /// This stage's duration in a frame's record, ns; nil when a time it needs is unknown.
    func duration(_ t: FrameTimes, writeStart: UInt64, written: UInt64) -> UInt64? {
        func span(_ from: UInt64, _ to: UInt64) -> UInt64? { from == 0 || to == 0 ? nil : (to > from ? to - from : 0) }
        switch self {
        case .captureToTick: return span(t.capture, t.taken)
        case .tickWake: return span(t.due, t.taken)
        case .compose: return span(t.taken, t.composed)
        case .encodeQueue: return span(t.composed, t.encodeStart)
        case .encode: return span(t.encodeStart, t.encodeEnd)
        case .outputQueue: return span(t.encodeEnd, writeStart)
        case .write: return span(writeStart, written)
        case .tickToWire: return span(t.due, written)
        case .captureToWritten: return span(t.capture, written)
        case .audioToWire: return nil
        }
    }
}

/// The median and 95th percentile of one stage over the recent frames, in milliseconds.
public struct LatencyQuantiles: Sendable, Equatable, Codable {
    public var p50: Double
    public var p95: Double
    public init(p50: Double, p95: Double) {
        self.p50 = p50
        self.p95 = p95
    }
}

/// The last `window` durations of each stage, kept by the one thread that writes the packets (an
/// output's), summarised on demand. Fixed memory: a ring per stage.
public struct LatencyBudget: Sendable {
    public let window: Int
    private var rings: [Ring]

    struct Ring: Sendable {
        var values: [UInt64]
        var next = 0
        var count = 0
        mutating func append(_ value: UInt64) {
            values[next] = value
            next = (next + 1) % values.count
            count = min(count + 1, values.count)
        }
    }

    public init(window: Int = 300) {
        self.window = max(1, window)
        rings = Array(repeating: Ring(values: Array(repeating: 0, count: max(1, window))), count: LatencyStage.allCases.count)
    }

    /// Records one program video frame whose packet was handed to the muxer at `writeStart` and written
    /// at `written` (each stage its frame knew).
    public mutating func record(_ times: FrameTimes, writeStart: UInt64, written: UInt64) {
        for (index, stage) in LatencyStage.allCases.enumerated() {
            if let duration = stage.duration(times, writeStart: writeStart, written: written) { rings[index].append(duration) }
        }
    }

    /// Records one audio packet written at `written` whose program time falls at `due` on the clock.
    public mutating func recordAudio(due: UInt64, written: UInt64) {
        rings[LatencyStage.allCases.firstIndex(of: .audioToWire)!].append(written > due ? written - due : 0)
    }

    /// p50 and p95 of each stage over its recorded values (a stage never recorded is left out).
    public func summary() -> [LatencyStage: LatencyQuantiles] {
        var result: [LatencyStage: LatencyQuantiles] = [:]
        for (index, stage) in LatencyStage.allCases.enumerated() {
            let ring = rings[index]
            guard ring.count > 0 else { continue }
            let known = ring.values.prefix(ring.count).sorted()
            func at(_ p: Double) -> Double { Double(known[Int((Double(known.count - 1) * p).rounded())]) / 1e6 }
            result[stage] = LatencyQuantiles(p50: at(0.5), p95: at(0.95))
        }
        return result
    }
}
