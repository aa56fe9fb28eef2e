import Graphics
import StudioCore

/// The program thread's picture work without the program thread, for Benchmarks/compose-bench only:
/// the very `Compositor` and `TransitionRenderer` a show uses, driven frame by frame as fast as the
/// caller likes (no clock, no queues), so their CPU time per frame can be measured. Not for the show:
/// `ProgramSwitcher` is the way to compose a program. Not thread-safe: one thread owns it.
public final class CompositorBenchmark {
    public let width: Int
    public let height: Int
    private let pool: FramePool
    private let compositor: Compositor
    private var scenes: [SceneDescription: PreparedScene] = [:]
    private let texts = TextRenderer()

    /// A failure the compositor reported (a frame it could not convert): the benchmark stops on it.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
        pool = FramePool(capacity: VideoFrame.byteCount(format: .i420, width: width, height: height), limit: 16)
        compositor = Compositor(width: width, height: height, pool: pool)
    }

    /// The scene's layers in pixels of this program, bottom first, as the compositor places them (to
    /// build the same composition with another tool).
    public func layers(of scene: SceneDescription) throws(Failure) -> [ResolvedLayer] { try prepared(scene).layers.layers }

    /// `scene` composed from `frames` (by camera name; a missing camera shows its slate), as the
    /// program thread composes it on a tick.
    public func render(_ scene: SceneDescription, frames: [String: VideoFrame], sequence: UInt64 = 0) throws(Failure) -> VideoFrame {
        let picture = compositor.render(scene: try prepared(scene), pictures: { camera in
            frames[camera.name].map(CameraPicture.frame) ?? .slate(["NO CAMERA", camera.name])
        }, now: 0, sequence: sequence)
        if let error = compositor.takeErrors().first { throw Failure(description: "\(error.camera.name): \(error.error)") }
        return picture.frame
    }

    /// Frame `index` of the transition `spec` from `a` to `b` (both program-size I420), as the program
    /// thread renders it.
    public func render(_ spec: TransitionSpec, index: Int, from a: VideoFrame, to b: VideoFrame, sequence: UInt64 = 0) -> VideoFrame {
        let output = VideoFrame.allocate(format: .i420, width: width, height: height, pool: pool, sequence: sequence)
        TransitionRenderer.render(spec, index: index, from: a, to: b, into: output)
        return output
    }

    /// `picture` (I420) blended over `rect` of `frame` (I420, `rect` even-aligned and inside it, the
    /// picture's size) with `opacity` 0...1 and, when given, a per-pixel `alpha` plane (`picture.width`
    /// bytes a row), as the compositor draws a translucent layer or a graphic with transparency.
    public func blend(_ picture: VideoFrame, alpha: UnsafeBufferPointer<UInt8>?, opacity: Double, over frame: VideoFrame, at rect: PixelRect) {
        guard let target = frame.region(rect), target.width == picture.width, target.height == picture.height else { return }
        PlaneOps.blend(picture, alpha: alpha, opacity: Int((opacity * 256).rounded()), over: target)
    }

    private func prepared(_ scene: SceneDescription) throws(Failure) -> PreparedScene {
        if let found = scenes[scene] { return found }
        let made: PreparedScene
        do { made = try PreparedScene(scene, width: width, height: height, texts: texts) } catch {
            throw Failure(description: error.description)
        }
        scenes[scene] = made
        return made
    }
}
