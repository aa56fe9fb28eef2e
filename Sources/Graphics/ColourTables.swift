import Foundation
import StudioCore

/// The colour step of the picture settings as two 256-entry lookup tables: one for luma (contrast
/// around mid grey, then brightness, then gamma, the order of FFmpeg's `eq` filter) and one for both
/// chroma planes (saturation: the distance from neutral 128 scaled). Built once per change of the
/// settings; applying them is one table read per byte.
struct ColourTables {
    let brightness: Double
    let contrast: Double
    let gamma: Double
    let saturation: Double
    /// Nil when luma stays as it is.
    let luma: [UInt8]?
    /// Nil when chroma stays as it is.
    let chroma: [UInt8]?

    init(_ settings: PictureSettings) {
        brightness = settings.brightness
        contrast = settings.contrast
        gamma = settings.gamma
        saturation = settings.saturation
        luma = Self.lumaTable(brightness: brightness, contrast: contrast, gamma: gamma)
        chroma = Self.chromaTable(saturation: saturation)
    }

    /// True when these tables were built for the colour part of `settings`.
    func matches(_ settings: PictureSettings) -> Bool {
        brightness == settings.brightness && contrast == settings.contrast && gamma == settings.gamma
            && saturation == settings.saturation
    }

    /// out = 255 * (((in / 255 - 0.5) * contrast + 0.5 + brightness) clamped to 0...1) ^ (1 / gamma).
    static func lumaTable(brightness: Double, contrast: Double, gamma: Double) -> [UInt8]? {
        guard brightness != 0 || contrast != 1 || gamma != 1 else { return nil }
        return (0..<256).map { code in
            let level = min(max((Double(code) / 255 - 0.5) * contrast + 0.5 + brightness, 0), 1)
            return UInt8((pow(level, 1 / gamma) * 255).rounded())
        }
    }

    /// out = 128 + (in - 128) * saturation, clamped to 0...255.
    static func chromaTable(saturation: Double) -> [UInt8]? {
        guard saturation != 1 else { return nil }
        return (0..<256).map { code in UInt8(min(max((128 + Double(code - 128) * saturation).rounded(), 0), 255)) }
    }

    /// Every plane of the I420 `source` into `output` (the same size; it may be `source` itself):
    /// through the tables where there are tables, copied where there are none.
    func apply(_ source: VideoFrame, into output: VideoFrame) {
        let sameStorage = source.storage === output.storage
        for plane in 0..<3 {
            let table = plane == 0 ? luma : chroma
            let width = plane == 0 ? source.width : (source.width + 1) / 2
            let height = source.planes[plane].rows
            let from = UnsafePointer(source.plane(plane).assumingMemoryBound(to: UInt8.self))
            let to = output.plane(plane).assumingMemoryBound(to: UInt8.self)
            let fromStride = source.planes[plane].stride, toStride = output.planes[plane].stride
            guard let table else {
                if !sameStorage { Self.copyPlane(plane, of: source, into: output) }
                continue
            }
            table.withUnsafeBufferPointer { lookup in
                let lookup = lookup.baseAddress!
                for y in 0..<height {
                    let source = from + y * fromStride, target = to + y * toStride
                    for x in 0..<width { target[x] = lookup[Int(source[x])] }
                }
            }
        }
    }

    /// Copies plane `index` of I420 `source` into `output` (the same size).
    static func copyPlane(_ index: Int, of source: VideoFrame, into output: VideoFrame) {
        let width = index == 0 ? source.width : (source.width + 1) / 2
        for y in 0..<source.planes[index].rows {
            (output.plane(index) + y * output.planes[index].stride)
                .copyMemory(from: source.plane(index) + y * source.planes[index].stride, byteCount: width)
        }
    }
}
