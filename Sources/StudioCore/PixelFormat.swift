/// Pixel layouts the pipeline understands. The program runs in `i420` end to end (what x264 takes);
/// cameras may deliver others, which the switcher's scaler converts in the same pass as scaling.
///
/// Everything else about a format (its planes, its V4L2 fourccs, its PipeWire SPA ids, its FFmpeg pixel
/// format) is one row of `PixelFormat.table`: adding a format is adding a case here and a row there.
public enum PixelFormat: String, Sendable, Codable, CaseIterable {
    case i420      // planar Y, U, V; 4:2:0 (V4L2 YU12, FFmpeg yuv420p)
    case nv12      // planar Y, interleaved UV; 4:2:0
    case yuyv      // packed 4:2:2 (V4L2 YUYV, FFmpeg yuyv422)
    case uyvy      // packed 4:2:2
    case rgb24
    case bgr24
    case bgra
    case rgba
    case yuva420p  // i420 and a full-size alpha plane (FFmpeg yuva420p): a player's item with transparency
}

/// The shape of one plane relative to the picture: `bytesPerGroup` bytes for every `groupWidth` pixels of
/// a row, one plane row for every `rowStep` picture rows (2 for 4:2:0 chroma).
public struct PlaneGeometry: Hashable, Sendable {
    public var bytesPerGroup: Int
    public var groupWidth: Int
    public var rowStep: Int
    public init(bytesPerGroup: Int, groupWidth: Int = 1, rowStep: Int = 1) {
        self.bytesPerGroup = bytesPerGroup
        self.groupWidth = groupWidth
        self.rowStep = rowStep
    }

    /// Bytes of picture in one row of this plane for a picture `width` pixels wide.
    public func rowBytes(width: Int) -> Int { (width + groupWidth - 1) / groupWidth * bytesPerGroup }
    /// Rows of this plane for a picture `height` rows high.
    public func rows(height: Int) -> Int { (height + rowStep - 1) / rowStep }
}

/// A format's identity in another system, as plain data (StudioCore has no C): a V4L2 fourcc is its four
/// characters, a PipeWire format its `SPA_VIDEO_FORMAT_*` value (part of PipeWire's ABI) and name.
/// CaptureTests compare every one with the C headers' constants; MediaSupport resolves the FFmpeg name.
public struct PixelFormatRow: Sendable {
    public let format: PixelFormat
    /// The planes in memory order.
    public let planes: [PlaneGeometry]
    /// FFmpeg's name of the pixel format with the same memory layout (`av_get_pix_fmt`).
    public let ffmpegName: String
    /// V4L2 fourccs delivering this layout (the first is the one to ask for).
    public let v4l2FourCCs: [String]
    /// PipeWire raw video formats delivering this layout (the first is the one to ask for).
    public let pipeWire: [(spaID: UInt32, name: String)]
    /// The plane holding each pixel's opacity (0 transparent...255 opaque), for a format whose alpha the
    /// pipeline honours: nil for the rest (BGRA and RGBA cameras send BGRx/RGBx, their fourth byte is not alpha).
    public var alphaPlane: Int? = nil
}

extension PixelFormat {
    /// The one pixel-format table, in capture preference order: among modes equally close to what the
    /// program wants, a camera takes the earliest (no conversion first, then 4:2:0, packed 4:2:2, RGB).
    public static let table: [PixelFormatRow] = {
        let luma = PlaneGeometry(bytesPerGroup: 1)
        let rows = [
            PixelFormatRow(format: .i420, planes: [luma, PlaneGeometry(bytesPerGroup: 1, groupWidth: 2, rowStep: 2),
                                                   PlaneGeometry(bytesPerGroup: 1, groupWidth: 2, rowStep: 2)],
                           ffmpegName: "yuv420p", v4l2FourCCs: ["YU12"], pipeWire: [(2, "I420")]),
            PixelFormatRow(format: .nv12, planes: [luma, PlaneGeometry(bytesPerGroup: 2, groupWidth: 2, rowStep: 2)],
                           ffmpegName: "nv12", v4l2FourCCs: ["NV12"], pipeWire: [(23, "NV12")]),
            PixelFormatRow(format: .yuyv, planes: [PlaneGeometry(bytesPerGroup: 4, groupWidth: 2)],
                           ffmpegName: "yuyv422", v4l2FourCCs: ["YUYV"], pipeWire: [(4, "YUY2")]),
            PixelFormatRow(format: .uyvy, planes: [PlaneGeometry(bytesPerGroup: 4, groupWidth: 2)],
                           ffmpegName: "uyvy422", v4l2FourCCs: ["UYVY"], pipeWire: [(5, "UYVY")]),
            // V4L2 'AR24'/'XR24' and SPA BGRA/BGRx are B, G, R, A in memory (cameras send BGRx).
            PixelFormatRow(format: .bgra, planes: [PlaneGeometry(bytesPerGroup: 4)],
                           ffmpegName: "bgra", v4l2FourCCs: ["AR24", "XR24"], pipeWire: [(8, "BGRx"), (12, "BGRA")]),
            PixelFormatRow(format: .rgba, planes: [PlaneGeometry(bytesPerGroup: 4)],
                           ffmpegName: "rgba", v4l2FourCCs: ["AB24", "XB24"], pipeWire: [(7, "RGBx"), (11, "RGBA")]),
            PixelFormatRow(format: .rgb24, planes: [PlaneGeometry(bytesPerGroup: 3)],
                           ffmpegName: "rgb24", v4l2FourCCs: ["RGB3"], pipeWire: [(15, "RGB")]),
            PixelFormatRow(format: .bgr24, planes: [PlaneGeometry(bytesPerGroup: 3)],
                           ffmpegName: "bgr24", v4l2FourCCs: ["BGR3"], pipeWire: [(16, "BGR")]),
            // Made by players from a decoded picture with alpha (ProRes 4444, qtrle, PNG, VP9 with alpha);
            // no camera is asked for it. Its first three planes are I420's.
            PixelFormatRow(format: .yuva420p, planes: [luma, PlaneGeometry(bytesPerGroup: 1, groupWidth: 2, rowStep: 2),
                                                       PlaneGeometry(bytesPerGroup: 1, groupWidth: 2, rowStep: 2), luma],
                           ffmpegName: "yuva420p", v4l2FourCCs: [], pipeWire: [], alphaPlane: 3),
        ]
        precondition(Set(rows.map(\.format)) == Set(PixelFormat.allCases) && rows.count == PixelFormat.allCases.count,
                     "one row per pixel format")
        return rows
    }()

    private static let rowIndex: [PixelFormat: Int] =
        Dictionary(uniqueKeysWithValues: table.enumerated().map { ($0.element.format, $0.offset) })

    /// This format's row of `table`.
    public var row: PixelFormatRow { Self.table[Self.rowIndex[self]!] }

    /// Whether frames of this format carry an alpha plane (`PixelFormatRow.alphaPlane`).
    public var hasAlpha: Bool { row.alphaPlane != nil }

    /// 0 for the most preferred format (see `table`).
    public var preferenceRank: Int { Self.rowIndex[self]! }

    /// Bytes of picture per row of each plane (without padding).
    public func rowBytes(width: Int) -> [Int] { row.planes.map { $0.rowBytes(width: width) } }

    /// Bytes per row and rows of each plane for a frame of this format, with rows padded to `alignment`:
    /// how `VideoFrame.allocate` lays frames out.
    public func planeLayouts(width: Int, height: Int, alignment: Int = 32) -> [PlaneLayout] {
        func align(_ value: Int) -> Int { (value + alignment - 1) / alignment * alignment }
        var offset = 0
        return row.planes.map { plane in
            let layout = PlaneLayout(offset: offset, stride: align(plane.rowBytes(width: width)), rows: plane.rows(height: height))
            offset += layout.byteCount
            return layout
        }
    }

    /// The planes of a frame stored in one block as drivers deliver it: the first plane's rows `stride`
    /// bytes apart and every later plane right after the one before, its rows as far apart in proportion
    /// to its bytes per pixel (half for I420 chroma, the same for NV12's interleaved chroma).
    public func planeLayouts(height: Int, contiguousWithStride stride: Int) -> [PlaneLayout] {
        let first = row.planes[0]
        var offset = 0
        return row.planes.map { plane in
            let planeStride = stride * plane.bytesPerGroup * first.groupWidth / (plane.groupWidth * first.bytesPerGroup)
            let layout = PlaneLayout(offset: offset, stride: planeStride, rows: plane.rows(height: height))
            offset += layout.byteCount
            return layout
        }
    }
}

/// Where one plane sits inside a frame's storage.
public struct PlaneLayout: Hashable, Sendable {
    public var offset: Int
    public var stride: Int
    public var rows: Int
    public init(offset: Int, stride: Int, rows: Int) {
        self.offset = offset
        self.stride = stride
        self.rows = rows
    }
    public var byteCount: Int { stride * rows }
}
