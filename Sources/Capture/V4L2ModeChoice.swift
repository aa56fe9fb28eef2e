#if canImport(Glibc)
import Glibc
#endif
import StudioCore

/// Picking a capture mode from what a device offers.
public enum V4L2ModeChoice {
    /// A concrete mode to ask the device for.
    public struct Choice: Sendable, Hashable, CustomStringConvertible {
        public var fourcc: FourCC
        public var width: Int
        public var height: Int
        /// Nil when the device does not tell its rates (the driver's default is used).
        public var frameRate: Rational?
        public init(fourcc: FourCC, width: Int, height: Int, frameRate: Rational?) {
            self.fourcc = fourcc
            self.width = width
            self.height = height
            self.frameRate = frameRate
        }
        public var description: String { "\(fourcc) \(width)x\(height)@\(frameRate.map { "\($0)" } ?? "default")" }
    }

    /// Every usable mode, best first, for a wanted size and rate. The size comes first (nearest by area
    /// on a log scale, so 2x too big and 2x too small weigh the same, with a slight preference for
    /// bigger: the switcher scales down better than up), the rate next (a mode that cannot reach the
    /// wanted rate loses by how far it falls short), then the format: raw 4:2:0 before packed 4:2:2
    /// before RGB before MJPEG, which costs a decode. A camera that lacks the size is never refused:
    /// the nearest is taken and the switcher scales.
    public static func ranked(_ modes: [V4L2Mode], width: Int, height: Int, frameRate: Rational) -> [Choice] {
        let wantedArea = Double(max(width * height, 1))
        let scored: [(score: Double, rank: Int, choice: Choice)] = modes.compactMap { mode in
            guard mode.fourcc.publishedFormat != nil, mode.width > 0, mode.height > 0 else { return nil }
            let area = Double(mode.width * mode.height)
            var sizeDistance = abs(log2(area / wantedArea))
            if area < wantedArea { sizeDistance += 0.1 }
            let fastest = mode.rates.fastest ?? frameRate.doubleValue
            let rateMiss = max(0, frameRate.doubleValue - fastest) / frameRate.doubleValue
            let score = (sizeDistance * 100).rounded() / 100 + rateMiss * 2
            let choice = Choice(fourcc: mode.fourcc, width: mode.width, height: mode.height, frameRate: mode.rates.nearest(to: frameRate))
            return (score, mode.fourcc.preferenceRank, choice)
        }
        return scored.sorted { ($0.score, $0.rank, $0.choice.width) < ($1.score, $1.rank, $1.choice.width) }.map(\.choice)
    }

    public static func best(_ modes: [V4L2Mode], for program: ProgramFormat) -> Choice? {
        ranked(modes, width: program.width, height: program.height, frameRate: program.frameRate).first
    }

    /// What to try when STREAMON says the bus has no room (ENOSPC) for `current`: the same size in a
    /// compressed format first, then smaller sizes (compressed first, then by the usual ranking).
    public static func lighterAlternatives(to current: Choice, in modes: [V4L2Mode], frameRate: Rational) -> [Choice] {
        let all = ranked(modes, width: current.width, height: current.height, frameRate: frameRate)
        var result: [Choice] = []
        if !current.fourcc.isCompressed {
            result += all.filter { $0.fourcc.isCompressed && $0.width == current.width && $0.height == current.height }
        }
        let smaller = all.filter { $0.width * $0.height < current.width * current.height }
        result += smaller.filter { $0.fourcc.isCompressed } + smaller.filter { !$0.fourcc.isCompressed }
        return result.filter { $0 != current }
    }
}
