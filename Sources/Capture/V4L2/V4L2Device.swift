import CV4L2
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// A V4L2 pixel-format code (`YUYV`, `MJPG`, `NV12`...).
public struct FourCC: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// From four ASCII characters (`"YUYV"`); nil for anything else.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 4 else { return nil }
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    public var description: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> ($0 * 8)) }
        return String(decoding: bytes, as: UTF8.self).trimmingTrailingSpaces
    }

    public static let mjpeg = FourCC(rawValue: cv4l2_pix_fmt_mjpeg())
    public static let jpeg = FourCC(rawValue: cv4l2_pix_fmt_jpeg())
    public static let yuyv = FourCC(rawValue: cv4l2_pix_fmt_yuyv())
    public static let uyvy = FourCC(rawValue: cv4l2_pix_fmt_uyvy())
    public static let nv12 = FourCC(rawValue: cv4l2_pix_fmt_nv12())
    public static let yu12 = FourCC(rawValue: cv4l2_pix_fmt_yuv420())
    public static let rgb24 = FourCC(rawValue: cv4l2_pix_fmt_rgb24())
    public static let bgr24 = FourCC(rawValue: cv4l2_pix_fmt_bgr24())
    public static let abgr32 = FourCC(rawValue: cv4l2_pix_fmt_abgr32())
    public static let xbgr32 = FourCC(rawValue: cv4l2_pix_fmt_xbgr32())
    public static let rgba32 = FourCC(rawValue: cv4l2_pix_fmt_rgba32())
    public static let rgbx32 = FourCC(rawValue: cv4l2_pix_fmt_rgbx32())

    /// JPEG frames, decoded on the capture thread.
    public var isCompressed: Bool { self == .mjpeg || self == .jpeg }

    /// The StudioCore format frames are published in: the device's own layout for raw formats (the
    /// pixel-format table's V4L2 fourccs), I420 for decoded MJPEG; nil for formats studio cannot take.
    public var publishedFormat: PixelFormat? { isCompressed ? .i420 : Self.rawFormats[self] }

    /// Every fourcc of `PixelFormat.table`, with its pipeline format.
    static let rawFormats: [FourCC: PixelFormat] = Dictionary(uniqueKeysWithValues: PixelFormat.table.flatMap { row in
        row.v4l2FourCCs.map { (FourCC($0)!, row.format) }
    })
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " || text.last == "\0" { text.removeLast() }
        return text
    }
}

/// What VIDIOC_QUERYCAP says about a node.
public struct V4L2Capabilities: Sendable, Hashable {
    public var driver: String
    public var card: String
    public var busInfo: String
    /// The node's own capabilities (device_caps when the driver sets V4L2_CAP_DEVICE_CAPS).
    public var deviceCaps: UInt32

    public init(driver: String, card: String, busInfo: String, deviceCaps: UInt32) {
        self.driver = driver
        self.card = card
        self.busInfo = busInfo
        self.deviceCaps = deviceCaps
    }

    /// A single-planar video capture node with streaming I/O: what studio captures from. Metadata and
    /// output nodes (a UVC camera has a metadata node beside its video node) are not.
    public var isVideoCapture: Bool {
        deviceCaps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 && deviceCaps & UInt32(V4L2_CAP_STREAMING) != 0
    }
}

/// One size a format offers, as VIDIOC_ENUM_FRAMESIZES gives it.
public enum V4L2FrameSize: Sendable, Hashable {
    case discrete(width: Int, height: Int)
    /// Continuous sizes are stepwise with step 1.
    case stepwise(minWidth: Int, maxWidth: Int, widthStep: Int, minHeight: Int, maxHeight: Int, heightStep: Int)

    /// The offered size nearest to `width`x`height` (itself for a discrete size).
    func nearest(toWidth width: Int, height: Int) -> (width: Int, height: Int) {
        switch self {
        case .discrete(let w, let h): return (w, h)
        case .stepwise(let minW, let maxW, let stepW, let minH, let maxH, let stepH):
            func snap(_ value: Int, _ low: Int, _ high: Int, _ step: Int) -> Int {
                let clamped = min(max(value, low), high)
                let step = max(step, 1)
                return min(low + (clamped - low + step / 2) / step * step, high)
            }
            return (snap(width, minW, maxW, stepW), snap(height, minH, maxH, stepH))
        }
    }
}

/// Frame rates a format and size offer (VIDIOC_ENUM_FRAMEINTERVALS).
public enum V4L2FrameRates: Sendable, Hashable {
    /// Fastest first.
    case discrete([Rational])
    case range(ClosedRange<Double>)
    case unknown

    /// The same rates in the terms of the mode ranking (a range's ends to a thousandth of a frame).
    var offered: OfferedRates {
        switch self {
        case .discrete(let rates): .list(rates)
        case .range(let range): .range(min: Rational(Int32((range.lowerBound * 1000).rounded()), 1000),
                                       max: Rational(Int32((range.upperBound * 1000).rounded()), 1000))
        case .unknown: .unknown
        }
    }

    var fastest: Double? {
        switch self {
        case .discrete(let rates): rates.map(\.doubleValue).max()
        case .range(let range): range.upperBound
        case .unknown: nil
        }
    }
}

/// One format + size with its rates: an entry of what a device offers.
public struct V4L2Mode: Sendable, Hashable, CustomStringConvertible {
    public var fourcc: FourCC
    public var width: Int
    public var height: Int
    public var rates: V4L2FrameRates

    public init(fourcc: FourCC, width: Int, height: Int, rates: V4L2FrameRates) {
        self.fourcc = fourcc
        self.width = width
        self.height = height
        self.rates = rates
    }

    public var cameraMode: CameraMode {
        switch rates {
        case .discrete(let list): CameraMode(format: fourcc.description, width: width, height: height, frameRates: list)
        case .range(let range): CameraMode(format: fourcc.description, width: width, height: height, rateRange: range)
        case .unknown: CameraMode(format: fourcc.description, width: width, height: height)
        }
    }

    public var description: String { cameraMode.description }
}

/// What a capture session runs at: format, size, bytes per row, rate.
public struct V4L2StreamFormat: Sendable, Hashable, CustomStringConvertible {
    public var fourcc: FourCC
    public var width: Int
    public var height: Int
    public var bytesPerLine: Int
    public var imageSize: Int
    /// Nil when the driver does not report a rate.
    public var frameRate: Rational?

    public var description: String { "\(fourcc) \(width)x\(height)@\(frameRate.map { "\($0)" } ?? "?")" }
}

/// One open V4L2 device node. Owns the file descriptor (closed by `close()` or deinit). Not shared
/// between threads: each user (the capture thread, a control request, the discovery) opens its own.
public final class V4L2Device {
    public let path: String
    let fd: Int32

    /// Opens the node read-write and non-blocking (DQBUF then returns EAGAIN instead of waiting; the
    /// capture thread waits in poll).
    public init(path: String) throws(SystemError) {
        self.path = path
        fd = try syscall("open \(path)") { open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) }
    }

    private var isClosed = false
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        _ = Glibc.close(fd)
    }

    deinit { close() }

    @inline(__always)
    func ioctl<T>(_ name: String, _ request: UInt, _ argument: inout T) throws(SystemError) {
        // The V4L2 argument structs are plain C structs (no object references).
        _ = try withUnsafeMutableBytes(of: &argument) { (raw) throws(SystemError) in
            try syscall(name) { cv4l2_ioctl(fd, request, raw.baseAddress) }
        }
    }

    // MARK: Enumeration

    public func capabilities() throws(SystemError) -> V4L2Capabilities {
        var caps = v4l2_capability()
        try ioctl("VIDIOC_QUERYCAP", cv4l2_vidioc_querycap(), &caps)
        let deviceCaps = caps.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? caps.device_caps : caps.capabilities
        return V4L2Capabilities(driver: Self.string(caps.driver), card: Self.string(caps.card),
                                busInfo: Self.string(caps.bus_info), deviceCaps: deviceCaps)
    }

    /// Pixel formats of the capture queue, with the driver's description.
    public func formats() throws(SystemError) -> [(fourcc: FourCC, name: String)] {
        var result: [(FourCC, String)] = []
        for index in 0..<UInt32(512) {
            var description = v4l2_fmtdesc()
            description.index = index
            description.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            do { try ioctl("VIDIOC_ENUM_FMT", cv4l2_vidioc_enum_fmt(), &description) } catch let failure where failure.errno == EINVAL { break }
            result.append((FourCC(rawValue: description.pixelformat), Self.string(description.description)))
        }
        return result
    }

    public func frameSizes(of fourcc: FourCC) throws(SystemError) -> [V4L2FrameSize] {
        var result: [V4L2FrameSize] = []
        for index in 0..<UInt32(256) {
            var size = v4l2_frmsizeenum()
            size.index = index
            size.pixel_format = fourcc.rawValue
            do { try ioctl("VIDIOC_ENUM_FRAMESIZES", cv4l2_vidioc_enum_framesizes(), &size) } catch let failure where failure.errno == EINVAL { break }
            if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                result.append(.discrete(width: Int(size.discrete.width), height: Int(size.discrete.height)))
            } else {
                let s = size.stepwise
                result.append(.stepwise(minWidth: Int(s.min_width), maxWidth: Int(s.max_width), widthStep: Int(max(s.step_width, 1)),
                                        minHeight: Int(s.min_height), maxHeight: Int(s.max_height), heightStep: Int(max(s.step_height, 1))))
                break  // stepwise and continuous come as the only entry
            }
        }
        return result
    }

    public func frameRates(of fourcc: FourCC, width: Int, height: Int) throws(SystemError) -> V4L2FrameRates {
        var rates: [Rational] = []
        for index in 0..<UInt32(256) {
            var interval = v4l2_frmivalenum()
            interval.index = index
            interval.pixel_format = fourcc.rawValue
            interval.width = UInt32(width)
            interval.height = UInt32(height)
            do { try ioctl("VIDIOC_ENUM_FRAMEINTERVALS", cv4l2_vidioc_enum_frameintervals(), &interval) } catch let failure where failure.errno == EINVAL || failure.errno == ENOTTY { break }
            if interval.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                if let rate = Self.rate(ofInterval: interval.discrete) { rates.append(rate) }
            } else {
                // Stepwise/continuous intervals: the slowest rate is 1/max interval, the fastest 1/min.
                let slow = Self.rate(ofInterval: interval.stepwise.max)?.doubleValue ?? 1
                let fast = Self.rate(ofInterval: interval.stepwise.min)?.doubleValue ?? slow
                return .range(min(slow, fast)...max(slow, fast))
            }
        }
        return rates.isEmpty ? .unknown : .discrete(rates.sorted { $0.doubleValue > $1.doubleValue })
    }

    /// Everything the device offers that studio can take (see `FourCC.publishedFormat`), each format's
    /// sizes with their rates. A stepwise size range is listed as its smallest and largest size, plus the
    /// size nearest to `near` when given.
    public func offeredModes(near program: ProgramFormat? = nil, includeUnsupported: Bool = false) throws(SystemError) -> [V4L2Mode] {
        var modes: [V4L2Mode] = []
        for (fourcc, _) in try formats() where includeUnsupported || fourcc.publishedFormat != nil {
            var sizes: [(Int, Int)] = []
            for size in try frameSizes(of: fourcc) {
                switch size {
                case .discrete(let w, let h): sizes.append((w, h))
                case .stepwise(let minW, let maxW, _, let minH, let maxH, _):
                    sizes.append((minW, minH))
                    if let program { sizes.append(size.nearest(toWidth: program.width, height: program.height)) }
                    sizes.append((maxW, maxH))
                }
            }
            var seen = Set<[Int]>()
            for (w, h) in sizes where seen.insert([w, h]).inserted {
                modes.append(V4L2Mode(fourcc: fourcc, width: w, height: h, rates: try frameRates(of: fourcc, width: w, height: h)))
            }
        }
        return modes
    }

    // MARK: Format and rate

    public func currentFormat() throws(SystemError) -> V4L2StreamFormat {
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        try ioctl("VIDIOC_G_FMT", cv4l2_vidioc_g_fmt(), &format)
        return streamFormat(format.fmt.pix, rate: try? frameRate())
    }

    /// VIDIOC_S_FMT: asks for a format and size; returns what the driver granted (it may adjust both).
    /// `queue` is the capture queue but for a program writing into an output node (`setOutputFormat`).
    @discardableResult
    public func setFormat(_ fourcc: FourCC, width: Int, height: Int,
                          queue: v4l2_buf_type = V4L2_BUF_TYPE_VIDEO_CAPTURE) throws(SystemError) -> V4L2StreamFormat {
        var format = v4l2_format()
        format.type = queue.rawValue
        format.fmt.pix.width = UInt32(width)
        format.fmt.pix.height = UInt32(height)
        format.fmt.pix.pixelformat = fourcc.rawValue
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try ioctl("VIDIOC_S_FMT", cv4l2_vidioc_s_fmt(), &format)
        return streamFormat(format.fmt.pix, rate: queue == V4L2_BUF_TYPE_VIDEO_CAPTURE ? try? frameRate() : nil)
    }

    /// The current frame rate (VIDIOC_G_PARM); nil when the driver has no time-per-frame capability.
    public func frameRate() throws(SystemError) -> Rational? {
        var parameters = v4l2_streamparm()
        parameters.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        try ioctl("VIDIOC_G_PARM", cv4l2_vidioc_g_parm(), &parameters)
        guard parameters.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 else { return nil }
        return Self.rate(ofInterval: parameters.parm.capture.timeperframe)
    }

    /// VIDIOC_S_PARM: asks for a frame rate; returns what the driver granted.
    @discardableResult
    public func setFrameRate(_ rate: Rational) throws(SystemError) -> Rational? {
        var parameters = v4l2_streamparm()
        parameters.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        parameters.parm.capture.timeperframe = v4l2_fract(numerator: UInt32(rate.denominator), denominator: UInt32(rate.numerator))
        try ioctl("VIDIOC_S_PARM", cv4l2_vidioc_s_parm(), &parameters)
        return Self.rate(ofInterval: parameters.parm.capture.timeperframe)
    }

    private func streamFormat(_ pix: v4l2_pix_format, rate: Rational??) -> V4L2StreamFormat {
        V4L2StreamFormat(fourcc: FourCC(rawValue: pix.pixelformat), width: Int(pix.width), height: Int(pix.height),
                         bytesPerLine: Int(pix.bytesperline), imageSize: Int(pix.sizeimage), frameRate: rate ?? nil)
    }

    // MARK: Streaming (used by the capture session)

    func requestBuffers(_ count: Int) throws(SystemError) -> Int {
        var request = v4l2_requestbuffers()
        request.count = UInt32(count)
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl("VIDIOC_REQBUFS", cv4l2_vidioc_reqbufs(), &request)
        return Int(request.count)
    }

    func queryBuffer(_ index: Int) throws(SystemError) -> (offset: Int, length: Int) {
        var buffer = v4l2_buffer()
        buffer.index = UInt32(index)
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl("VIDIOC_QUERYBUF", cv4l2_vidioc_querybuf(), &buffer)
        return (Int(buffer.m.offset), Int(buffer.length))
    }

    func queueBuffer(_ index: Int) throws(SystemError) {
        var buffer = v4l2_buffer()
        buffer.index = UInt32(index)
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl("VIDIOC_QBUF", cv4l2_vidioc_qbuf(), &buffer)
    }

    /// VIDIOC_DQBUF; nil when no buffer is ready (EAGAIN).
    func dequeueBuffer() throws(SystemError) -> v4l2_buffer? {
        var buffer = v4l2_buffer()
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        do {
            try ioctl("VIDIOC_DQBUF", cv4l2_vidioc_dqbuf(), &buffer)
        } catch let failure where failure.errno == EAGAIN {
            return nil
        }
        return buffer
    }

    func streamOn() throws(SystemError) {
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        try ioctl("VIDIOC_STREAMON", cv4l2_vidioc_streamon(), &type)
    }

    func streamOff() throws(SystemError) {
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        try ioctl("VIDIOC_STREAMOFF", cv4l2_vidioc_streamoff(), &type)
    }

    // MARK: Helpers

    static func rate(ofInterval interval: v4l2_fract) -> Rational? {
        guard interval.numerator > 0, interval.denominator > 0 else { return nil }
        var (a, b) = (interval.denominator, interval.numerator)
        while b != 0 { (a, b) = (b, a % b) }
        let n = interval.denominator / a, d = interval.numerator / a
        guard n <= UInt32(Int32.max), d <= UInt32(Int32.max) else { return nil }
        return Rational(Int32(n), Int32(d))
    }

    static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
