/// The fixed output format of the program feed, driven by its own clock.
public struct ProgramFormat: Hashable, Sendable, Codable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var frameRate: Rational

    public init(width: Int, height: Int, frameRate: Rational) {
        self.width = width
        self.height = height
        self.frameRate = frameRate
    }

    public static let `default` = ProgramFormat(width: 1280, height: 720, frameRate: Rational(30))

    /// Parses `WxH@FPS`, for example `1280x720@30` or `1920x1080@30000/1001` or `1280x720@29.97`.
    public init?(parsing text: String) {
        let sizeAndRate = text.split(separator: "@", omittingEmptySubsequences: false)
        guard sizeAndRate.count == 2 else { return nil }
        let size = sizeAndRate[0].lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2, let w = Int(size[0]), let h = Int(size[1]),
              (16...7680).contains(w), (16...4320).contains(h), w % 2 == 0, h % 2 == 0,
              let rate = Rational(parsingRate: String(sizeAndRate[1])), (1.0...240.0).contains(rate.doubleValue)
        else { return nil }
        self.init(width: w, height: h, frameRate: rate)
    }

    public var description: String { "\(width)x\(height)@\(frameRate)" }
    public var frameInterval: MediaTime { MediaTime(count: 1, rate: frameRate) }
}

extension Rational {
    /// Parses `30`, `30000/1001` or `29.97` (decimal rates map to their NTSC fraction where one exists).
    /// Rates above 1000 and fractions with terms above 1,000,000 are refused (they are typos, and
    /// they would make timestamp arithmetic overflow).
    public init?(parsingRate text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard let n = Int32(parts[0]), let d = Int32(parts[1]), (1...1_000_000).contains(n), (1...1_000_000).contains(d),
                  Double(n) / Double(d) <= 1000 else { return nil }
            var (a, b) = (n, d)
            while b != 0 { (a, b) = (b, a % b) }
            self.init(n / a, d / a)
        } else if let n = Int32(text), (1...1000).contains(n) {
            self.init(n)
        } else if let value = Double(text), value > 0, value <= 1000, value.isFinite {
            for ntsc: Int32 in [24, 30, 60, 120] where abs(Double(ntsc) * 1000 / 1001 - value) < 0.01 {
                self.init(ntsc * 1000, 1001)
                return
            }
            self.init(Int32((value * 1000).rounded()), 1000)
        } else {
            return nil
        }
    }
}

/// The program's audio format: AAC is fed 48 kHz stereo.
public struct AudioFormat: Hashable, Sendable, Codable {
    public var sampleRate: Int
    public var channels: Int
    public init(sampleRate: Int = 48_000, channels: Int = 2) {
        self.sampleRate = sampleRate
        self.channels = channels
    }
    public static let program = AudioFormat()
}
