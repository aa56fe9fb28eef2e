import StudioCore
import StudioSystem

/// How fast an H.264 encoder runs on this machine at a program format, measured on camera-like
/// pictures (`SpeedProbe`).
public struct EncoderSpeed: Sendable, Equatable {
    /// The encoder measured (`libx264`, `h264_vaapi`), chosen as the server would choose it.
    public var encoderName: String
    public var width: Int
    public var height: Int
    /// Frames per second the program needs.
    public var neededFPS: Double
    /// Frames per second the encoder sustained (frames timed / seconds).
    public var measuredFPS: Double
    public var framesTimed: Int
    public var seconds: Double

    /// The encoder must run this much faster than the program's rate to keep up in a show: the
    /// cameras' conversions, the ISO encoders and the outputs share the CPU with it, and a measurement
    /// of half a second is not a show of an hour.
    public static let headroom = 1.25

    /// At least `headroom` times the program's rate.
    public var keepsUp: Bool { measuredFPS >= neededFPS * Self.headroom }

    /// `libx264 encodes 1920x1080 at ~48 fps here; the program needs 30`.
    public var summary: String {
        "\(encoderName) encodes \(width)x\(height) at ~\(Self.describe(measuredFPS)) fps here; the program needs \(Self.describe(neededFPS))"
    }

    static func describe(_ fps: Double) -> String {
        fps >= 10 ? String(Int(fps.rounded())) : String(Double(Int((fps * 10).rounded())) / 10)
    }
}

/// Measures an encoder's speed, bounded in time: it opens the encoder the settings choose (x264 with
/// the program's preset and bit rate, or VAAPI where the choice takes it), encodes one frame to warm up,
/// then times frames until `budgetSeconds` have passed or enough frames show it keeps up twice over.
/// The pictures are camera-like (a detailed scene panning, with sensor noise that changes every frame),
/// not a flat pattern an encoder would skip through; they are made before the clock starts.
public enum SpeedProbe {
    /// `serve` measures at start only formats with more pixels per second than 1280x720@30: the default
    /// program, which x264 veryfast encodes at well over its rate on any machine studio targets (about
    /// 76 fps measured on a busy 2-core VM, debug build), so the many short serves of a test suite, and
    /// every default show, start without the half second it costs.
    public static let startThreshold: Double = 1280 * 720 * 30

    /// Whether `serve` should measure `format` at start.
    public static func worthMeasuringAtStart(_ format: ProgramFormat) -> Bool {
        Double(format.width * format.height) * format.frameRate.doubleValue > startThreshold
    }

    /// - Parameters:
    ///   - budgetSeconds: the longest the timed encoding runs (one frame slower than that still counts).
    ///   - clock: the clock the timing reads.
    public static func measure(_ settings: VideoEncoderSettings, budgetSeconds: Double = 0.5,
                               clock: any Clock = .monotonic) throws -> EncoderSpeed {
        var settings = settings
        settings.faultInjectionAfterFrames = nil
        let encoder = try makeEncoder(for: settings).encoder
        let needed = settings.frameRate.doubleValue
        let pictures = ProbePictures.make(width: settings.width, height: settings.height, count: 4)
        // Enough frames to show the encoder keeps up twice over: no need to go on then.
        let enough = max(4, Int((2 * needed * budgetSeconds).rounded(.up)))
        var index: Int64 = 0
        func encodeNext() throws {
            _ = try encoder.encode(pictures[Int(index) % pictures.count], pts: MediaTime(count: index, rate: settings.frameRate),
                                   forceKeyframe: false)
            index += 1
        }
        try encodeNext()  // warm-up: the first frame sets up the encoder's threads and buffers
        let budget = UInt64(max(0.01, budgetSeconds) * 1e9)
        let started = clock.now()
        var timed = 0
        var elapsed: UInt64 = 0
        repeat {
            try encodeNext()
            timed += 1
            elapsed = clock.now() - started
        } while timed < enough && (elapsed < budget || timed < 2)
        _ = try? encoder.flush()
        let seconds = max(Double(elapsed) / 1e9, 1e-6)
        return EncoderSpeed(encoderName: encoder.name, width: settings.width, height: settings.height, neededFPS: needed,
                            measuredFPS: Double(timed) / seconds, framesTimed: timed, seconds: seconds)
    }
}

/// Camera-like I420 pictures for the speed probe: a blocky random scene (8x8 blocks of random
/// brightness and colour: edges and detail everywhere) seen through a window that pans a few pixels a
/// frame, plus noise of +-8 levels that differs in every frame and pixel (a sensor's grain), so the
/// encoder has real motion to search and residue to code.
enum ProbePictures {
    static func make(width: Int, height: Int, count: Int) -> [VideoFrame] {
        var random = XorShift(seed: 0x9E37_79B9_7F4A_7C15)
        let margin = 8 * count + 16
        let lumaScene = scene(width: width + margin, height: height + margin, random: &random)
        let chromaScene = scene(width: width / 2 + margin, height: height / 2 + margin, random: &random)
        // Plain loops, and the generator never captured by a closure: Swift 6.3's optimizer crashes on
        // an inout captured inside `map` and `withUnsafeBufferPointer` here (release builds).
        var frames: [VideoFrame] = []
        frames.reserveCapacity(count)
        for k in 0..<count {
            let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
            for plane in 0..<3 {
                let layout = frame.planes[plane]
                let (w, h) = plane == 0 ? (width, height) : (width / 2, height / 2)
                let source = plane == 0 ? lumaScene : chromaScene
                let sourceWidth = plane == 0 ? width + margin : width / 2 + margin
                // The pan: a few pixels right and down per frame (half that in chroma).
                let dx = plane == 0 ? 6 * k : 3 * k, dy = plane == 0 ? 4 * k : 2 * k
                let destination = frame.plane(plane).assumingMemoryBound(to: UInt8.self)
                source.withUnsafeBufferPointer { scene in
                    for y in 0..<h {
                        (destination + y * layout.stride).update(from: scene.baseAddress! + (y + dy) * sourceWidth + dx, count: w)
                    }
                }
                for y in 0..<h { addNoise(destination + y * layout.stride, count: w, random: &random) }
            }
            frames.append(frame)
        }
        return frames
    }

    /// Bytes of 8x8 blocks of random values in 32...159 (room for the noise on top without overflow).
    private static func scene(width: Int, height: Int, random: inout XorShift) -> [UInt8] {
        // The blocks' values first (the generator stays out of closures: see `make`), then the rows.
        let columns = (width + 7) / 8, rows = (height + 7) / 8
        var values = [UInt8](repeating: 0, count: columns * rows)
        for index in values.indices { values[index] = UInt8(truncatingIfNeeded: 32 + random.next() % 128) }
        var bytes = [UInt8](repeating: 0, count: width * height)
        bytes.withUnsafeMutableBufferPointer { scene in
            values.withUnsafeBufferPointer { values in
                for blockY in 0..<rows {
                    // The first row of this block row, a run of 8 per value; the rest copy it.
                    let first = scene.baseAddress! + blockY * 8 * width
                    for blockX in 0..<columns {
                        let x = blockX * 8
                        (first + x).update(repeating: values[blockY * columns + blockX], count: min(8, width - x))
                    }
                    for row in (blockY * 8 + 1)..<min(blockY * 8 + 8, height) {
                        (scene.baseAddress! + row * width).update(from: first, count: width)
                    }
                }
            }
        }
        return bytes
    }

    /// Adds 0...15 to every byte (8 at a time; the scene's values leave room), then takes 8 off.
    private static func addNoise(_ row: UnsafeMutablePointer<UInt8>, count: Int, random: inout XorShift) {
        let raw = UnsafeMutableRawPointer(row)
        var offset = 0
        while offset + 8 <= count {
            let value = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let noisy = value &+ (random.next() & 0x0F0F_0F0F_0F0F_0F0F) &- 0x0808_0808_0808_0808
            raw.storeBytes(of: noisy, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
    }
}

/// A small fast pseudo-random generator (xorshift64*): the probe's pictures are the same every run.
struct XorShift {
    private var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 1 : seed }
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}
