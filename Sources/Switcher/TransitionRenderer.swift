import FrameDrawing
import StudioCore

/// One frame of a transition from picture `a` to picture `b` (both program-size I420): frame `index`
/// (0-based) of `spec.frames` shows B's share `(index + 1) / frames`, so the last one is all B.
/// Wipes and pushes move by whole even pixels: the edge is at `share * width` (or height), rounded to
/// even, so it moves 1/N of the picture per frame.
enum TransitionRenderer {
    /// B's share on frame `index` of `frames`, 0...1.
    static func share(index: Int, frames: Int) -> Double { Double(index + 1) / Double(max(1, frames)) }

    /// A `stinger` plays `stinger` (its clip, loaded) at the program's `rate` (`renderStinger`); without
    /// its clip it is a cut.
    static func render(_ spec: TransitionSpec, index: Int, from a: VideoFrame, to b: VideoFrame, into output: VideoFrame,
                       stinger: StingerClip? = nil, rate: Rational = Rational(30)) {
        let share = share(index: index, frames: spec.frames)
        let width = output.width, height = output.height
        func even(_ value: Double) -> Int { Int((value / 2).rounded()) * 2 }
        switch spec.kind {
        case .cut:
            PlaneOps.copy(b, into: output)
        case .stinger:
            guard let stinger else { return PlaneOps.copy(b, into: output) }
            renderStinger(spec, stinger, index: index, rate: rate, from: a, to: b, into: output)
        case .mix:
            PlaneOps.mix(a, b, weight: Int((share * 256).rounded()), into: output)
        case .dip:
            let color = YUVColor(spec.color)
            if share <= 0.5 {
                PlaneOps.mix(a, color: color, weight: Int((share * 2 * 256).rounded()), into: output)
            } else {
                PlaneOps.mix(b, color: color, weight: Int(((1 - share) * 2 * 256).rounded()), into: output)
            }
        case .wipeRight, .wipeLeft:
            let edge = even(share * Double(width))
            let fromB = spec.kind == .wipeRight ? PixelRect(x: 0, y: 0, width: edge, height: height)
                                                : PixelRect(x: width - edge, y: 0, width: edge, height: height)
            let fromA = spec.kind == .wipeRight ? PixelRect(x: edge, y: 0, width: width - edge, height: height)
                                                : PixelRect(x: 0, y: 0, width: width - edge, height: height)
            PlaneOps.copy(fromA, of: a, into: output)
            PlaneOps.copy(fromB, of: b, into: output)
        case .wipeDown, .wipeUp:
            let edge = even(share * Double(height))
            let fromB = spec.kind == .wipeDown ? PixelRect(x: 0, y: 0, width: width, height: edge)
                                               : PixelRect(x: 0, y: height - edge, width: width, height: edge)
            let fromA = spec.kind == .wipeDown ? PixelRect(x: 0, y: edge, width: width, height: height - edge)
                                               : PixelRect(x: 0, y: 0, width: width, height: height - edge)
            PlaneOps.copy(fromA, of: a, into: output)
            PlaneOps.copy(fromB, of: b, into: output)
        case .pushLeft, .pushRight:
            let offset = even(share * Double(width))
            let direction = spec.kind == .pushLeft ? -1 : 1
            PlaneOps.place(a, at: direction * offset, 0, into: output)
            PlaneOps.place(b, at: direction * offset - direction * width, 0, into: output)
        case .pushUp, .pushDown:
            let offset = even(share * Double(height))
            let direction = spec.kind == .pushUp ? -1 : 1
            PlaneOps.place(a, at: 0, direction * offset, into: output)
            PlaneOps.place(b, at: 0, direction * offset - direction * height, into: output)
        }
    }
}
