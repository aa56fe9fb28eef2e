import CFFmpeg
import PixelKernels
import StudioCore

/// Converts a decoded JPEG picture (full-range YUV 4:2:2 or 4:2:0, FFmpeg's `yuvj422p`/`yuvj420p`, what
/// webcams' MJPEG decodes to) into the pipeline's limited-range I420, in one pass of 16-byte vectors:
/// luma `16 + Y * 219 / 255`, chroma `128 + (C - 128) * 224 / 255` (rounded; for 4:2:2 the mean of the
/// two chroma rows each 4:2:0 row sits between, as libswscale's bilinear filter takes them).
///
/// Why it exists: libswscale's general path (range conversion plus vertical chroma filter) cost 2.3-3 ms
/// a 1280x720 picture here (ffmpeg 5.1's CLI on noisy camera-like JPEGs; the decode itself 8.7 ms), on
/// the capture thread of every camera decoded at full size. `convert` answers false for anything else
/// (another format, a picture smaller than the output), and the caller uses libswscale.
public enum JPEGRangeConversion {
    /// Converts `frame` into `output` (I420, at most the picture's size: a reduced decode's odd side cut
    /// to even reads the picture's top-left); false when this conversion does not apply.
    public static func convert(_ frame: UnsafePointer<AVFrame>, into output: VideoFrame) -> Bool {
        let format = frame.pointee.format
        let verticalChroma: Int
        switch format {
        case AV_PIX_FMT_YUVJ422P.rawValue: verticalChroma = 1
        case AV_PIX_FMT_YUVJ420P.rawValue: verticalChroma = 2
        default: return false
        }
        let width = output.width, height = output.height
        guard output.format == .i420, width > 0, height > 0, width <= Int(frame.pointee.width), height <= Int(frame.pointee.height),
              let y = cff_frame_plane(UnsafeMutablePointer(mutating: frame), 0),
              let u = cff_frame_plane(UnsafeMutablePointer(mutating: frame), 1),
              let v = cff_frame_plane(UnsafeMutablePointer(mutating: frame), 2) else { return false }
        let strides = withUnsafeBytes(of: frame.pointee.linesize) { Array($0.bindMemory(to: Int32.self).prefix(3)).map(Int.init) }
        guard strides.allSatisfy({ $0 > 0 }) else { return false }
        let sourceChromaRows = verticalChroma == 1 ? Int(frame.pointee.height) : (Int(frame.pointee.height) + 1) / 2
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2

        let outY = output.plane(0).assumingMemoryBound(to: UInt8.self), strideY = output.planes[0].stride
        for row in 0..<height {
            FullRangeRows.luma(y + row * strides[0], outY + row * strideY, count: width)
        }
        for (index, source) in [(1, u), (2, v)] {
            let out = output.plane(index).assumingMemoryBound(to: UInt8.self), stride = output.planes[index].stride
            for row in 0..<chromaHeight {
                let destination = out + row * stride
                if verticalChroma == 2 {
                    FullRangeRows.chroma(source + row * strides[index], source + row * strides[index], destination, count: chromaWidth)
                } else {
                    let first = min(2 * row, sourceChromaRows - 1), second = min(2 * row + 1, sourceChromaRows - 1)
                    FullRangeRows.chroma(source + first * strides[index], source + second * strides[index], destination, count: chromaWidth)
                }
            }
        }
        return true
    }
}
