#if canImport(Glibc)
import Glibc
#endif
import StudioCore

/// The frame rates one offered mode runs at, as either backend states them.
public enum OfferedRates: Sendable, Hashable {
    /// Discrete rates, in any order.
    case list([Rational])
    case range(min: Rational, max: Rational)
    /// The device does not say (the driver's default is used).
    case unknown

    /// The offered rate nearest to `rate`: within a range `rate` itself, else the nearer end.
    func nearest(to rate: Rational) -> Rational? {
        switch self {
        case .list(let rates):
            return rates.filter { $0.numerator > 0 }.min { abs($0.doubleValue - rate.doubleValue) < abs($1.doubleValue - rate.doubleValue) }
        case let .range(min, max):
            return rate.doubleValue < min.doubleValue ? min : rate.doubleValue > max.doubleValue ? max : rate
        case .unknown:
            return nil
        }
    }

    var fastest: Double? {
        switch self {
        case .list(let rates): rates.map(\.doubleValue).max()
        case .range(_, let max): max.doubleValue
        case .unknown: nil
        }
    }
}

/// One mode a camera offers, in the terms both backends share. `Wire` is what the backend asks the
/// device for (a V4L2 `FourCC`, a PipeWire SPA format).
public struct OfferedMode<Wire: Hashable & Sendable>: Sendable, Hashable {
    public var wire: Wire
    /// The format frames are published in (I420 for a JPEG mode: the camera decodes it).
    public var published: PixelFormat
    /// JPEG images that the camera decodes.
    public var isCompressed: Bool
    public var width: Int
    public var height: Int
    public var rates: OfferedRates

    public init(wire: Wire, published: PixelFormat, isCompressed: Bool, width: Int, height: Int, rates: OfferedRates) {
        self.wire = wire
        self.published = published
        self.isCompressed = isCompressed
        self.width = width
        self.height = height
        self.rates = rates
    }
}

/// A concrete mode picked from the offered ones: the offer with the rate to ask for.
public struct RankedMode<Wire: Hashable & Sendable>: Sendable, Hashable {
    public var mode: OfferedMode<Wire>
    /// Nil when the device does not tell its rates.
    public var frameRate: Rational?
}

/// The one camera-mode policy, used by both camera backends (V4L2 through `V4L2ModeChoice`, PipeWire
/// through `PipeWireVideoFormats`), so the same webcam gets the same mode either way.
///
/// Each offered mode gets a score, lowest best:
/// - the size distance: `|log2(area / wanted area)|`, so 2x too big and 2x too small weigh the same,
///   plus 0.1 for a smaller picture (the switcher scales down better than up). A camera that lacks the
///   size is never refused: the nearest is taken and the switcher scales;
/// - plus `rateWeight` (2) times the share of the wanted rate the mode cannot reach (a mode reaching a
///   third of the rate costs 1.33, more than a picture 2x too small).
///
/// Equal scores (to 0.01) go to the pixel-format preference (`PixelFormat.table` order: I420, NV12,
/// YUYV, UYVY, RGB; JPEG last, since it costs a decode), then to the rate nearer the wanted one, then to
/// the narrower mode, then to the order offered. So the picture comes first: a webcam that sends 720p30
/// only as JPEG gives a 720p program its own size, decoded, rather than raw VGA scaled up (decoding
/// 720p JPEG costs a few percent of a core). The rate asked for is the offered one nearest the wanted rate.
public enum ModeRanking {
    static let rateWeight = 2.0

    public static func ranked<Wire>(_ modes: [OfferedMode<Wire>], width: Int, height: Int, frameRate: Rational) -> [RankedMode<Wire>] {
        let wantedArea = Double(max(width * height, 1)), wantedRate = frameRate.doubleValue
        let scored: [(key: (Double, Int, Double, Int, Int), ranked: RankedMode<Wire>)] = modes.enumerated().compactMap { index, mode in
            guard mode.width > 0, mode.height > 0 else { return nil }
            let area = Double(mode.width * mode.height)
            var score = abs(log2(area / wantedArea))
            if area < wantedArea { score += 0.1 }
            if wantedRate > 0 {
                score += rateWeight * max(0, wantedRate - (mode.rates.fastest ?? wantedRate)) / wantedRate
            }
            let rate = mode.rates.nearest(to: frameRate)
            let rank = mode.isCompressed ? PixelFormat.table.count : mode.published.preferenceRank
            let rateDistance = rate.map { abs($0.doubleValue - wantedRate) } ?? 0
            return (((score * 100).rounded() / 100, rank, rateDistance, mode.width, index), RankedMode(mode: mode, frameRate: rate))
        }
        return scored.sorted { $0.key < $1.key }.map(\.ranked)
    }
}
