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

    /// Every usable mode, best first, for a wanted size and rate, by the one camera-mode policy
    /// (`ModeRanking`, shared with PipeWire cameras).
    public static func ranked(_ modes: [V4L2Mode], width: Int, height: Int, frameRate: Rational) -> [Choice] {
        let offered = modes.compactMap { mode -> OfferedMode<FourCC>? in
            guard let published = mode.fourcc.publishedFormat else { return nil }
            return OfferedMode(wire: mode.fourcc, published: published, isCompressed: mode.fourcc.isCompressed,
                               width: mode.width, height: mode.height, rates: mode.rates.offered)
        }
        return ModeRanking.ranked(offered, width: width, height: height, frameRate: frameRate).map {
            Choice(fourcc: $0.mode.wire, width: $0.mode.width, height: $0.mode.height, frameRate: $0.frameRate)
        }
    }

    public static func best(_ modes: [V4L2Mode], for program: ProgramFormat) -> Choice? {
        ranked(modes, width: program.width, height: program.height, frameRate: program.frameRate).first
    }

    /// The mode for a change asked mid-show (`studio camera cam1 --size 640x480`) of a camera now in
    /// `current`: the best by `ranked`, except that a camera sending JPEG keeps sending JPEG where the
    /// device offers it at that mode's size and rate. At equal scores the ranking prefers raw (no decode
    /// to pay); but a JPEG camera's own images are what its passthrough ISO records, and a raw mode would
    /// make that ISO start an encoder (an encoder's CPU, a new file) until a JPEG mode came back (a webcam
    /// typically offers VGA both ways). Where the size is offered raw only, raw it is (the reply says what
    /// that does to the ISO).
    public static func forChange(from current: Choice, in modes: [V4L2Mode], width: Int, height: Int, frameRate: Rational) -> Choice? {
        let all = ranked(modes, width: width, height: height, frameRate: frameRate)
        guard let best = all.first, current.fourcc.isCompressed, !best.fourcc.isCompressed else { return all.first }
        return all.first { $0.fourcc.isCompressed && $0.width == best.width && $0.height == best.height && $0.frameRate == best.frameRate } ?? best
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
