import CV4L2
import Synchronization
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// One mmap streaming session on a device: format set, buffers mapped and queued, stream on. `stop()`
/// (or deinit) turns the stream off and unmaps. Used by one capture thread only.
final class V4L2Stream {
    let device: V4L2Device
    let format: V4L2StreamFormat
    private var buffers: [(address: UnsafeMutableRawPointer, length: Int)] = []
    private var isStreaming = false
    private let pool: FramePool
    private let published: PixelFormat

    init(device: V4L2Device, choice: V4L2ModeChoice.Choice, bufferCount: Int = 4, injectedStreamOnError: Int32? = nil) throws {
        self.device = device
        var granted = try device.setFormat(choice.fourcc, width: choice.width, height: choice.height)
        if let rate = choice.frameRate { granted.frameRate = try device.setFrameRate(rate) ?? granted.frameRate }
        format = granted
        published = granted.fourcc.publishedFormat ?? .yuyv
        let needed = published.planeLayouts(height: granted.height, contiguousWithStride: granted.bytesPerLine).map { $0.offset + $0.byteCount }.max() ?? 0
        pool = FramePool(capacity: max(granted.imageSize, needed, 1), limit: 4)
        let count = try device.requestBuffers(bufferCount)
        guard count > 0 else { throw CaptureError(camera: nil, message: "the device gave no capture buffers") }
        do {
            for index in 0..<count {
                let (offset, length) = try device.queryBuffer(index)
                let address = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, device.fd, off_t(offset))
                guard let address, address != MAP_FAILED else { throw SystemError(call: "mmap", errno: errno) }
                buffers.append((address, length))
                try device.queueBuffer(index)
            }
            if let injectedStreamOnError { throw SystemError(call: "VIDIOC_STREAMON", errno: injectedStreamOnError) }
            try device.streamOn()
            isStreaming = true
        } catch {
            release()
            throw error
        }
    }

    deinit { stop() }

    func stop() {
        if isStreaming {
            try? device.streamOff()
            isStreaming = false
        }
        release()
    }

    private func release() {
        for buffer in buffers { munmap(buffer.address, buffer.length) }
        if !buffers.isEmpty { _ = try? device.requestBuffers(0) }
        buffers = []
    }

    func bytes(of buffer: v4l2_buffer) -> UnsafeRawBufferPointer {
        guard Int(buffer.index) < buffers.count else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let mapped = buffers[Int(buffer.index)]
        return UnsafeRawBufferPointer(start: mapped.address, count: min(Int(buffer.bytesused), mapped.length))
    }

    /// The planes of a raw frame as the driver lays them out (rows `bytesPerLine` apart, chroma after luma).
    var planes: [PlaneLayout] {
        published.planeLayouts(height: format.height, contiguousWithStride: format.bytesPerLine)
    }

    /// Copies a raw frame out of the driver's buffer (which goes back to the driver at once); nil when
    /// the buffer is shorter than the format needs (a damaged frame).
    func copyFrame(_ bytes: UnsafeRawBufferPointer, captureTime: UInt64, sequence: UInt64) -> VideoFrame? {
        let layout = planes
        let needed = layout.map { $0.offset + $0.byteCount }.max() ?? 0
        guard needed > 0, bytes.count >= needed, needed <= pool.capacity, let source = bytes.baseAddress else { return nil }
        let storage = pool.makeStorage()
        storage.bytes.copyMemory(from: source, byteCount: needed)
        return VideoFrame(format: published, width: format.width, height: format.height, planes: layout, storage: storage,
                          captureTime: captureTime, sequence: sequence)
    }
}
