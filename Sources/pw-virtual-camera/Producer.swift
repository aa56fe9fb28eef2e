import CPipeWire
import StudioCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What the stream's callbacks need, reached through their `data` pointer (C callbacks cannot capture).
///
/// `@unchecked Sendable`: `streaming` is written by the loop thread in callbacks (which hold the loop
/// lock) and read by the render thread under that lock; `buffersSent` is written only under that lock
/// (by `send`, on the render thread); the rest is immutable.
final class Producer: @unchecked Sendable {
    let stream: OpaquePointer
    let wire: WireFormat
    let width: Int
    let height: Int
    /// The newest rendered picture (and whether it is to be sent as a white flash instead), with the
    /// CLOCK_MONOTONIC time it was handed over (its buffer's header pts); `send` copies it out.
    let latest = Mutex<(frame: VideoFrame, flash: Bool, sentAt: UInt64)?>(nil)
    /// With --format mjpeg: the newest JPEG (already white for a flash, already cut when corrupt) and
    /// the time it was handed over (the time --log-frames writes).
    let latestJPEG = Mutex<(bytes: [UInt8], sentAt: UInt64)?>(nil)
    var streaming = false
    var buffersSent: UInt64 = 0
    init(stream: OpaquePointer, wire: WireFormat, width: Int, height: Int) {
        self.stream = stream
        self.wire = wire
        self.width = width
        self.height = height
    }

    /// The stream's callbacks. Made here, not in top-level code: closures written at the top level of
    /// main.swift belong to the main actor, and Swift traps when the loop thread calls them.
    static func makeEvents() -> UnsafeMutablePointer<pw_stream_events> {
        let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.state_changed = { data, _, state, error in
            Unmanaged<Producer>.fromOpaque(data!).takeUnretainedValue().streaming = state == PW_STREAM_STATE_STREAMING
            if let error { say("pw-virtual-camera: stream error: \(String(cString: error))", to: 2) }
        }
        events.pointee.param_changed = { data, id, param in
            guard id == SPA_PARAM_Format.rawValue, param != nil else { return }
            let producer = Unmanaged<Producer>.fromOpaque(data!).takeUnretainedValue()
            // The format is fixed (we offered one); answer with the buffer layout it needs, and a header
            // meta on every buffer for the time each frame is sent (`Producer.stamp`).
            var buffer = [UInt8](repeating: 0, count: 512)
            buffer.withUnsafeMutableBytes { bytes in
                var builder = cpw_pod_builder(bytes.baseAddress, UInt32(bytes.count))
                var params = [cpw_build_video_buffers(&builder, UInt32(producer.wire.size(width: producer.width, height: producer.height)),
                                                      UInt32(producer.wire.stride(width: producer.width))),
                              cpw_build_meta_header(&builder)]
                _ = pw_stream_update_params(producer.stream, &params, UInt32(params.count))
            }
        }
        // Nothing to do when the graph asks: the render thread fills a buffer and queues it before it
        // triggers the cycle (`Producer.send`), so the cycle carries the picture just handed over.
        // Filled here instead, on the trigger, a picture went out only with the next cycle: a frame
        // interval late (measured 33.5 ms at 30 fps between a picture's pts and its arrival).
        events.pointee.process = { _ in }
        return events
    }
}
extension Producer {
    /// Render thread, with the loop locked: fills a free buffer with the newest picture (or JPEG) and
    /// queues it, so the cycle the caller triggers next carries it. No free buffer (the consumer still
    /// holds them all): the picture is not sent, as a camera drops a frame nobody took.
    func send() {
        guard streaming, let buffer = pw_stream_dequeue_buffer(stream) else { return }
        defer { pw_stream_queue_buffer(stream, buffer) }
        let size = wire.size(width: width, height: height), stride = wire.stride(width: width)
        if wire == .mjpeg {
            guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let datas = spaBuffer.pointee.datas,
                  let base = datas[0].data, let jpeg = latestJPEG.withLock({ $0 }),
                  Int(datas[0].maxsize) >= jpeg.bytes.count else { return }
            jpeg.bytes.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            stamp(spaBuffer, sentAt: jpeg.sentAt)
            datas[0].chunk.pointee.offset = 0
            datas[0].chunk.pointee.size = UInt32(jpeg.bytes.count)
            datas[0].chunk.pointee.stride = 0
            datas[0].chunk.pointee.flags = 0
            return
        }
        guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let datas = spaBuffer.pointee.datas,
              let base = datas[0].data, Int(datas[0].maxsize) >= size, let latest = latest.withLock({ $0 }) else { return }
        if latest.flash {
            writeWhite(to: base)
        } else {
            write(latest.frame, to: base)
        }
        stamp(spaBuffer, sentAt: latest.sentAt)
        datas[0].chunk.pointee.offset = 0
        datas[0].chunk.pointee.size = UInt32(size)
        datas[0].chunk.pointee.stride = Int32(stride)
        datas[0].chunk.pointee.flags = 0
    }

    /// Writes `sentAt` (CLOCK_MONOTONIC ns) as the pts of `buffer`'s header meta, when the link gave the
    /// buffers one: what a V4L2 node's buffers carry (the driver's time of the frame), so a consumer
    /// that dequeues the buffer late still knows when it was sent. With the loop locked (`send`).
    func stamp(_ buffer: UnsafeMutablePointer<spa_buffer>, sentAt: UInt64) {
        guard let meta = spa_buffer_find_meta_data(buffer, SPA_META_Header.rawValue, MemoryLayout<spa_meta_header>.size) else { return }
        let header = meta.assumingMemoryBound(to: spa_meta_header.self)
        header.pointee.flags = 0
        header.pointee.offset = 0
        header.pointee.pts = Int64(sentAt)
        header.pointee.dts_offset = 0
        header.pointee.seq = buffersSent
        buffersSent += 1
    }

    /// A white picture in the wire layout (Y 235, chroma neutral).
    func writeWhite(to destination: UnsafeMutableRawPointer) {
        let bytes = destination.assumingMemoryBound(to: UInt8.self)
        switch wire {
        case .i420, .nv12:
            memset(bytes, 235, width * height)
            memset(bytes + width * height, 128, width * height / 2)
        case .yuy2:
            for pair in 0..<(width * height / 2) {
                bytes[pair * 4] = 235
                bytes[pair * 4 + 1] = 128
                bytes[pair * 4 + 2] = 235
                bytes[pair * 4 + 3] = 128
            }
        case .mjpeg:
            break  // JPEGs are made white by the encoder
        }
    }

    /// Copies `frame` (I420 or NV12 in the pipeline's padded layout) into `destination` in the wire layout.
    func write(_ frame: VideoFrame, to destination: UnsafeMutableRawPointer) {
        switch wire {
        case .mjpeg:
            break  // sent from `latestJPEG` instead
        case .i420, .nv12:
            var offset = 0
            for (index, plane) in frame.planes.enumerated() {
                let rowBytes = index == 0 ? width : (wire == .i420 ? width / 2 : width)
                for row in 0..<plane.rows {
                    (destination + offset).copyMemory(from: frame.plane(index) + row * plane.stride, byteCount: rowBytes)
                    offset += rowBytes
                }
            }
        case .yuy2:
            let y = frame.plane(0).assumingMemoryBound(to: UInt8.self), u = frame.plane(1).assumingMemoryBound(to: UInt8.self)
            let v = frame.plane(2).assumingMemoryBound(to: UInt8.self)
            let out = destination.assumingMemoryBound(to: UInt8.self)
            for row in 0..<height {
                let yRow = y + row * frame.planes[0].stride, uRow = u + (row / 2) * frame.planes[1].stride, vRow = v + (row / 2) * frame.planes[2].stride
                let line = out + row * width * 2
                for pair in 0..<(width / 2) {
                    line[pair * 4] = yRow[pair * 2]
                    line[pair * 4 + 1] = uRow[pair]
                    line[pair * 4 + 2] = yRow[pair * 2 + 1]
                    line[pair * 4 + 3] = vRow[pair]
                }
            }
        }
    }
}
