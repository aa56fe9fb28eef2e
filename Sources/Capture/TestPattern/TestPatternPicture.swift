import FrameDrawing
import StudioCore
import StudioSystem

/// Layout and colours of the test-pattern picture, in fractions of the frame (any size):
///
///     +--------+-----------------------------------------+
///     |        | colour bars (75 %)                 0.55 |
///     | IDENT  +-----------------------------------------+
///     | BLOCK  | sweep strip, a white box moving -> 0.10 |
///     | (cam   +-----------------------------------------+
///     | colour)| CAM1          (name) 0.55 | sync  0.20 |
///     |        | 00:00:12:07                  (timecode) |
///     +--------+-----------------------------------------+
///       0.25                     0.75
///
/// The sync strip (`syncRegion`, black otherwise) marks the one frame whose capture time first reaches
/// each whole second of the real wall clock (CLOCK_REALTIME, `WallClock.system`: never a node's injected
/// shift), like a clapperboard: its first cell (`syncCells[0]`) is white, and the three others say the
/// second modulo 8 in binary (cell 1 its lowest bit), so two cameras' files, decoded, show the same
/// wall-clock second (`syncMark(in:)`) even when their clocks are whole seconds apart. That is how their
/// placement on one timeline is checked.
extension TestPatternCamera {
    /// The ident block: the left quarter of the frame, full height, filled with `identColor(for:)`.
    public static let identRegion = RelativeRect(x: 0, y: 0, width: 0.25, height: 1)
    public static let barsRegion = RelativeRect(x: 0.25, y: 0, width: 0.75, height: 0.55)
    /// The strip the moving box sweeps across (once every two seconds, left to right).
    public static let sweepRegion = RelativeRect(x: 0.25, y: 0.55, width: 0.75, height: 0.10)
    /// Where the camera's name is written (white on black).
    public static let nameRegion = RelativeRect(x: 0.25, y: 0.65, width: 0.55, height: 0.17)
    /// The sync strip: on the first frame of each wall-clock second, its marker cell white and its three
    /// bit cells the second modulo 8; black on the others.
    public static let syncRegion = RelativeRect(x: 0.80, y: 0.65, width: 0.20, height: 0.17)
    /// The strip's four cells, left to right: the marker, then bits 0, 1 and 2 of the second modulo 8.
    public static let syncCells: [RelativeRect] = (0..<4).map { index in
        RelativeRect(x: syncRegion.x + syncRegion.width * Double(index) / 4, y: syncRegion.y, width: syncRegion.width / 4, height: syncRegion.height)
    }
    /// Where the running timecode HH:MM:SS:FF is written (white on black).
    public static let timecodeRegion = RelativeRect(x: 0.25, y: 0.82, width: 0.75, height: 0.18)

    /// Ident colours, full-range RGB, by camera number: cam1 red, cam2 green, cam3 blue, cam4 yellow,
    /// cam5 cyan, cam6 magenta, cam7 orange, cam8 violet, cam9 azure, cam10 lime, cam11 rose,
    /// cam12 spring green; after that the table repeats. None is grey, so a slate never matches.
    public static let identPalette: [(red: Int, green: Int, blue: Int)] = [
        (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 255, 255), (255, 0, 255),
        (255, 128, 0), (128, 0, 255), (0, 128, 255), (128, 255, 0), (255, 0, 128), (0, 255, 128),
    ]

    /// The ident colour of a camera: by the number in its name (`cam3` -> third entry of
    /// `identPalette`); names without a number get a colour from their characters.
    public static func identColor(for camera: CameraID) -> YUVColor {
        let number = Int(camera.name.drop { !$0.isNumber }).map { max($0, 1) }
            ?? (camera.name.unicodeScalars.reduce(0) { ($0 &* 31 &+ Int($1.value)) & 0xFFFF } + 1)
        let rgb = identPalette[(number - 1) % identPalette.count]
        return YUVColor(red: rgb.red, green: rgb.green, blue: rgb.blue)
    }

    /// Which of `candidates` a colour sampled from the ident region shows: the nearest ident colour, if
    /// it is within `tolerance` (RGB distance); nil for anything else (a slate, a black frame).
    public static func camera(showing color: YUVColor, among candidates: [CameraID], tolerance: Double = 100) -> CameraID? {
        let ranked = candidates.map { ($0, identColor(for: $0).distance(to: color)) }.min { $0.1 < $1.1 }
        guard let ranked, ranked.1 <= tolerance else { return nil }
        return ranked.0
    }

    /// Which of `candidates` a frame shows, judged by the centre of its ident region.
    public static func camera(in frame: VideoFrame, among candidates: [CameraID], tolerance: Double = 100) -> CameraID? {
        guard let color = frame.averageColor(in: identRegion.centre(0.6)) else { return nil }
        return camera(showing: color, among: candidates, tolerance: tolerance)
    }

    /// The wall-clock second modulo 8 a frame (decoded, any size) marks with the sync strip; nil for a
    /// frame without it (judged by the centre of each of `syncCells`).
    public static func syncMark(in frame: VideoFrame) -> Int? {
        let colors = syncCells.compactMap { frame.averageColor(in: $0.centre(0.6)) }
        return colors.count == syncCells.count ? syncMark(showing: colors) : nil
    }

    /// The second modulo 8 that colours sampled from the centres of `syncCells` (in order) mark: nil
    /// unless the marker cell is white.
    public static func syncMark(showing colors: [YUVColor]) -> Int? {
        guard colors.count == syncCells.count, colors[0].y >= 128 else { return nil }
        return (1..<4).reduce(0) { mark, bit in colors[bit].y >= 128 ? mark | 1 << (bit - 1) : mark }
    }

    /// `HH:MM:SS:FF` of frame `frame` at `framesPerSecond` (non-drop-frame).
    public static func timecode(frame: Int64, framesPerSecond: Int) -> String {
        let fps = Int64(max(1, framesPerSecond))
        let ff = frame % fps, totalSeconds = frame / fps
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(two(totalSeconds / 3600)):\(two(totalSeconds / 60 % 60)):\(two(totalSeconds % 60)):\(two(ff))"
    }
}

/// Renders one camera's pictures. The static background is drawn once; each frame is a memcpy of it
/// plus the moving box and the timecode. Owned by the camera's capture thread.
final class TestPatternPicture {
    private let format: CameraFormat
    private let background: VideoFrame
    private let pool: FramePool
    private let sweep: PixelRect
    private let boxWidth: Int
    private let sweepFrames: Int64
    private let framesPerSecond: Int
    private let timecodeOrigin: (x: Int, y: Int)
    private let timecodeScale: Int
    private let timecodeRows: Range<Int>
    /// Draw the capture time as a `CaptureStamp` bar code (at the bottom of the colour bars).
    private let stampsCaptureTime: Bool
    private let sync: PixelRect
    private let syncCells: [PixelRect]
    /// A capture time (CLOCK_MONOTONIC ns, or the test's clock) on the wall clock, in µs.
    private let wallTime: (UInt64) -> Int64
    /// The wall-clock second of the last frame rendered (nil before the first).
    private var lastSecond: Int64?

    static let barColors: [YUVColor] = [
        YUVColor(red: 191, green: 191, blue: 191), YUVColor(red: 191, green: 191, blue: 0),
        YUVColor(red: 0, green: 191, blue: 191), YUVColor(red: 0, green: 191, blue: 0),
        YUVColor(red: 191, green: 0, blue: 191), YUVColor(red: 191, green: 0, blue: 0),
        YUVColor(red: 0, green: 0, blue: 191),
    ]
    static let stripColor = YUVColor.grey(40)
    static let boxColor = YUVColor.white
    static let textColor = YUVColor.white

    /// - Parameter wallTime: a capture time on the wall clock (µs); the real one (`WallClock.system`) by default.
    init(camera: CameraID, format: CameraFormat, stampsCaptureTime: Bool = false,
         wallTime: @escaping (UInt64) -> Int64 = { WallClock.system.time(ofMonotonic: $0) }) {
        self.wallTime = wallTime
        self.format = format
        self.stampsCaptureTime = stampsCaptureTime
        let w = format.width, h = format.height
        pool = FramePool(capacity: VideoFrame.byteCount(format: format.pixelFormat, width: w, height: h), limit: 8)
        let background = VideoFrame.allocate(format: format.pixelFormat, width: w, height: h)
        background.fill(with: .black)
        background.fill(TestPatternCamera.identRegion.pixelRect(width: w, height: h), with: TestPatternCamera.identColor(for: camera))
        let bars = TestPatternCamera.barsRegion.pixelRect(width: w, height: h)
        for (index, color) in Self.barColors.enumerated() {
            let x0 = bars.x + ((bars.width * index / Self.barColors.count) & ~1)
            let x1 = index == Self.barColors.count - 1 ? bars.maxX : bars.x + ((bars.width * (index + 1) / Self.barColors.count) & ~1)
            background.fill(PixelRect(x: x0, y: bars.y, width: x1 - x0, height: bars.height), with: color)
        }
        sync = TestPatternCamera.syncRegion.pixelRect(width: w, height: h)
        syncCells = TestPatternCamera.syncCells.map { $0.pixelRect(width: w, height: h) }
        sweep = TestPatternCamera.sweepRegion.pixelRect(width: w, height: h)
        background.fill(sweep, with: Self.stripColor)
        boxWidth = max(2, (sweep.width / 12) & ~1)

        let label = camera.name.uppercased()
        let nameRect = TestPatternCamera.nameRegion.pixelRect(width: w, height: h)
        let nameScale = BitmapFont.largestScale(for: label, fittingWidth: nameRect.width * 9 / 10, height: nameRect.height * 8 / 10)
        let nameHeight = BitmapFont.height(scale: nameScale)
        background.drawText(label, x: nameRect.x + (max(2, nameRect.width / 20) & ~1),
                            y: nameRect.y + (nameRect.height - nameHeight) / 2, scale: nameScale, color: Self.textColor)
        self.background = background

        framesPerSecond = max(1, Int(format.frameRate.doubleValue.rounded()))
        sweepFrames = Int64(2 * framesPerSecond)
        let sample = TestPatternCamera.timecode(frame: 0, framesPerSecond: framesPerSecond)
        let timecodeRect = TestPatternCamera.timecodeRegion.pixelRect(width: w, height: h)
        timecodeScale = BitmapFont.largestScale(for: sample, fittingWidth: timecodeRect.width * 9 / 10, height: timecodeRect.height * 8 / 10)
        timecodeOrigin = (timecodeRect.x + (max(2, timecodeRect.width / 20) & ~1),
                          timecodeRect.y + (timecodeRect.height - BitmapFont.height(scale: timecodeScale)) / 2)
        timecodeRows = timecodeRect.y..<timecodeRect.maxY
    }

    /// Frame number `tick` since the camera started.
    func render(tick: Int64, captureTime: UInt64) -> VideoFrame {
        let frame = VideoFrame.allocate(format: format.pixelFormat, width: format.width, height: format.height,
                                        pool: pool, captureTime: captureTime, sequence: UInt64(tick))
        // A recycled buffer already holds an earlier picture of this camera: only the strip the box
        // sweeps and the timecode change, so only those rows are restored from the background.
        if frame.storage.isRecycled {
            frame.copyRows(sweep.y..<sweep.maxY, from: background)
            frame.copyRows(timecodeRows, from: background)
        } else {
            frame.copyPixels(from: background)
        }
        let travel = max(0, sweep.width - boxWidth)
        let x = sweep.x + (Int(Int64(travel) * (tick % sweepFrames) / max(1, sweepFrames - 1)) & ~1)
        frame.fill(PixelRect(x: x, y: sweep.y, width: boxWidth, height: sweep.height), with: Self.boxColor)
        frame.drawText(TestPatternCamera.timecode(frame: tick, framesPerSecond: framesPerSecond),
                       x: timecodeOrigin.x, y: timecodeOrigin.y, scale: timecodeScale, color: Self.textColor)
        // Drawn on every frame (a recycled buffer may hold an earlier white strip): a small rectangle.
        let second = wallTime(captureTime) / 1_000_000
        frame.fill(sync, with: .black)
        if let lastSecond, second > lastSecond {
            frame.fill(syncCells[0], with: Self.boxColor)
            for bit in 0..<3 where (second >> Int64(bit)) & 1 == 1 { frame.fill(syncCells[bit + 1], with: Self.boxColor) }
        }
        lastSecond = second
        if stampsCaptureTime { CaptureStamp.draw(captureTime, into: frame) }
        return frame
    }
}
