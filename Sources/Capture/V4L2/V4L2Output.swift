import CV4L2
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// The writing side of a V4L2 output node, as a program that feeds a v4l2loopback device uses it
/// (the test tool `pw-virtual-camera --v4l2-output`): set the format and rate, then write one frame per
/// write(2). With v4l2loopback's `exclusive_caps=1` the node then presents itself as a capture device
/// offering exactly that format, as a USB webcam would.
extension V4L2Device {
    /// VIDIOC_S_FMT on the output queue; returns what the driver granted (v4l2loopback keeps the first
    /// writer's format until every opener has closed the node).
    @discardableResult
    public func setOutputFormat(_ fourcc: FourCC, width: Int, height: Int) throws(SystemError) -> V4L2StreamFormat {
        try setFormat(fourcc, width: width, height: height, queue: V4L2_BUF_TYPE_VIDEO_OUTPUT)
    }

    /// VIDIOC_S_PARM on the output queue: the rate readers of the node are told (v4l2loopback reports it
    /// as the capture side's only frame interval).
    public func setOutputFrameRate(_ rate: Rational) throws(SystemError) {
        var parameters = v4l2_streamparm()
        parameters.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue
        parameters.parm.output.timeperframe = v4l2_fract(numerator: UInt32(rate.denominator), denominator: UInt32(rate.numerator))
        try ioctl("VIDIOC_S_PARM", cv4l2_vidioc_s_parm(), &parameters)
    }

    /// Writes one frame (a whole JPEG for MJPEG) with one write(2). Returns how many bytes the driver
    /// took (v4l2loopback cuts a frame longer than its buffer).
    @discardableResult
    public func writeFrame(_ bytes: [UInt8]) throws(SystemError) -> Int {
        try syscall("write \(path)") { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
    }
}
