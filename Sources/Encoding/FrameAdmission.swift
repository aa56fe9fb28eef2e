import MediaSupport
import StudioCore

/// What every H.264 encoder checks before it takes a program frame: it has not been flushed, the frame
/// is I420 at the configured size, and its pts lies after the previous frame's on the frame-rate grid
/// (a repeated or backwards timestamp would corrupt the stream, so such a frame is skipped).
struct FrameAdmission {
    private var lastTicks = Int64.min

    /// The frame's index on the grid, or nil when it must be skipped. Throws for a frame the encoder
    /// cannot take, naming `caller`.
    mutating func admit(_ input: VideoFrame, pts: MediaTime, settings: VideoEncoderSettings, flushed: Bool,
                        caller: String) throws -> Int64? {
        guard !flushed else { throw FFmpegError(call: caller, message: "encoder already flushed") }
        guard input.format == .i420, input.width == settings.width, input.height == settings.height,
              input.planes.count == 3 else {
            throw FFmpegError(call: caller,
                             message: "frame \(input.width)x\(input.height) \(input.format) does not match encoder \(settings.width)x\(settings.height) i420")
        }
        let ticks = Self.ticks(pts, rate: settings.frameRate)
        guard ticks > lastTicks else { return nil }
        lastTicks = ticks
        return ticks
    }

    /// The frame index nearest to `time` at `rate` (program frames sit exactly on that grid).
    static func ticks(_ time: MediaTime, rate: Rational) -> Int64 {
        let numerator = time.microseconds * Int64(rate.numerator)
        let denominator = Int64(rate.denominator) * 1_000_000
        return numerator >= 0 ? (numerator + denominator / 2) / denominator : -((-numerator + denominator / 2) / denominator)
    }
}
