import FrameDrawing
import StudioCore

/// Full-frame slates ("CAMERA LOST / CAM2", "NO CAMERA") in the program format. Each distinct text is
/// rendered once and cached; per frame only a memcpy of it and the program time are drawn. Used by
/// the program thread only.
final class SlateRenderer {
    private let width: Int
    private let height: Int
    private let pool: FramePool
    private var cache: [SlateKey: VideoFrame] = [:]
    private let timeScale: Int
    private let timeOrigin: (x: Int, y: Int)

    init(width: Int, height: Int, pool: FramePool) {
        self.width = width
        self.height = height
        self.pool = pool
        let sample = Self.timeText(MediaTime.zero)
        timeScale = BitmapFont.largestScale(for: sample, fittingWidth: width / 2, height: height / 12)
        timeOrigin = (((width - BitmapFont.width(of: sample, scale: timeScale)) / 2) & ~1, height * 3 / 4)
    }

    /// `lines` in big letters, centred in the middle half of the frame, with the program time below.
    func render(lines: [String], programTime: MediaTime, captureTime: UInt64, sequence: UInt64) -> VideoFrame {
        let background = self.background(lines, width: width, height: height)
        let frame = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool,
                                        captureTime: captureTime, sequence: sequence)
        frame.copyPixels(from: background)
        frame.drawText(Self.timeText(programTime), x: timeOrigin.x, y: timeOrigin.y, scale: timeScale,
                       color: ProgramSwitcher.slateTextColor)
        return frame
    }

    /// `lines` on the slate background at any size (a lost camera's layer in a composed scene), without
    /// the program time; rendered once per text and size. Read-only: copy from it.
    func background(_ lines: [String], width: Int, height: Int) -> VideoFrame {
        let key = SlateKey(lines: lines, width: width, height: height)
        if let cached = cache[key] { return cached }
        if cache.count >= 32 { cache.removeAll() }
        let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
        frame.fill(with: ProgramSwitcher.slateColor)
        // Text block between 30 % and 70 % of the height; the top quarter stays plain background.
        let widest = lines.max { $0.count < $1.count } ?? ""
        let lineCount = max(1, lines.count)
        let blockHeight = height * 4 / 10
        let scale = BitmapFont.largestScale(for: widest, fittingWidth: width * 8 / 10,
                                            height: blockHeight * BitmapFont.glyphHeight / (lineCount * BitmapFont.lineHeight))
        let totalHeight = (lineCount - 1) * BitmapFont.lineHeight * scale + BitmapFont.height(scale: scale)
        var y = height * 3 / 10 + (blockHeight - totalHeight) / 2
        for line in lines {
            frame.drawCentredText(line, y: y, scale: scale, color: ProgramSwitcher.slateTextColor)
            y += BitmapFont.lineHeight * scale
        }
        cache[key] = frame
        return frame
    }

    private struct SlateKey: Hashable {
        var lines: [String]
        var width: Int
        var height: Int
    }

    /// `HH:MM:SS.mmm` of a program time.
    static func timeText(_ time: MediaTime) -> String {
        let ms = max(0, time.milliseconds)
        func pad(_ value: Int64, _ digits: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, digits - text.count)) + text
        }
        let seconds = ms / 1000
        return "\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2)).\(pad(ms % 1000, 3))"
    }
}
