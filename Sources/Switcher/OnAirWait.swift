import StudioCore
import StudioSystem

/// Whether a program tick waits a moment past its due time for a picture that belongs to it.
///
/// Tick `n` is due at `grid.time(ofFrame: n)` and shows each camera's newest picture. The picture that
/// belongs to it is the one captured after tick `n - 1` was due and no later than tick `n` was: that is
/// the pts an ISO recording gives the same picture (`FrameGrid.firstFrame(atOrAfter:)`), so program and
/// ISO line up, and the picture waits at most one frame interval for its tick. A camera's way to the
/// switcher (a PipeWire buffer's hand-over, an MJPEG decode) can bring that picture a few milliseconds
/// after the tick was due; without waiting, the tick would show the picture before it, and the one that
/// was late would wait a whole frame interval more for the next tick: more than a frame interval from
/// capture to tick, and the program a frame behind the ISO.
///
/// So a tick waits, up to `limit` past its due time, for each camera it shows (`camerasOnAir`) whose
/// newest picture is from an earlier tick while its next one, by the camera's own cadence, was captured
/// by this tick's due time and, by the camera's way (capture to arrival, as measured), arrives within
/// the limit. It waits for no camera that is stalled (a picture already missing), lost, whose cadence
/// it has not learnt yet, or whose pictures come too long after their capture (a camera that stamps the
/// start of its exposure, a producer that hands its pictures over a cycle late): waiting would only
/// make every tick late. Never longer than `limit`: the rate never changes, and the pts stay on the
/// grid. Only the program thread uses it.
struct OnAirWait {
    /// The longest a tick waits past its due time, ns (0: never).
    let limit: UInt64

    /// A camera's newest picture as last seen, the interval between its pictures and its way (capture
    /// to arrival), as measured.
    private struct Cadence {
        var version: UInt64
        var capture: UInt64
        var interval: UInt64?
        var way: UInt64 = 0
        /// Gaps in a row: intervals half as long again as the cadence (pictures missed).
        var gaps = 0
    }

    private var cadences: [CameraID: Cadence] = [:]

    init(limit: UInt64) { self.limit = limit }

    /// Notes `camera`'s newest picture (its slot's version, its capture and arrival times) and learns its
    /// cadence: the mean capture interval, smoothed over about eight pictures (a gap, pictures the camera
    /// missed, is not its cadence, unless three come in a row: the camera's rate changed), and its way,
    /// the longest of its recent pictures' (smoothed the same way down, at once up). A slot that starts
    /// over (a replugged camera) starts over.
    mutating func observe(_ camera: CameraID, version: UInt64, capture: UInt64, arrival: UInt64) {
        let way = arrival > capture ? arrival - capture : 0
        guard var cadence = cadences[camera], version >= cadence.version, capture >= cadence.capture else {
            cadences[camera] = Cadence(version: version, capture: capture, interval: nil, way: way)
            return
        }
        guard version > cadence.version else { return }
        cadence.way = way >= cadence.way ? way : cadence.way - (cadence.way - way) / 8
        let sample = (capture - cadence.capture) / (version - cadence.version)
        if let interval = cadence.interval, sample > interval + interval / 2 {
            cadence.gaps += 1
            if cadence.gaps >= 3 { cadence = Cadence(version: version, capture: capture, interval: sample) }
        } else if let interval = cadence.interval {
            cadence.interval = UInt64(Int64(interval) + (Int64(sample) - Int64(interval)) / 8)
            cadence.gaps = 0
        } else if sample > 0 {
            cadence.interval = sample
        }
        cadence.version = version
        cadence.capture = capture
        cadences[camera] = cadence
    }

    /// How many cameras it knows: more than the switcher has, and some are gone (`keep(only:)`).
    var count: Int { cadences.count }

    /// Forgets the cameras not in `cameras` (gone from the switcher).
    mutating func keep(only cameras: some Collection<CameraID>) {
        let keep = Set(cameras)
        cadences = cadences.filter { keep.contains($0.key) }
    }

    /// Whether `camera`'s picture for the tick due at `due` is still to come and worth waiting for, its
    /// newest (observed) picture captured at `capture`: the newest is from an earlier tick (captured at or
    /// before `previous`, when the tick before was due), the next one was captured by `due`, and not two (a
    /// stalled camera), and by the camera's way it arrives within the limit.
    func expectsPicture(of camera: CameraID, capture: UInt64, due: UInt64, previous: UInt64) -> Bool {
        guard limit > 0, let cadence = cadences[camera], let interval = cadence.interval, interval > 0, capture <= previous else {
            return false
        }
        let next = capture + interval
        return next <= due && next + interval > due && next + cadence.way <= due + limit
    }
}

extension ProgramSwitcher.Shared {
    /// The cameras a tick shows: on program (inside its scene too), both sides of the running transition,
    /// and in an overlay on air.
    func camerasOnAir(program: ProgramSource?, transition: ProgramSwitcher.ActiveTransition?) -> Set<CameraID> {
        Set([program, transition?.from, transition?.to].flatMap { cameras(in: $0) } + camerasInOverlays())
    }
}
