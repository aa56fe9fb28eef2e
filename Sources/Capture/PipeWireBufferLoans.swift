import CPipeWire
import Synchronization
import StudioCore
import StudioSystem

/// The capture buffers a raw-format PipeWire camera lends to the pipeline instead of copying each
/// picture out of them (a 1280x720 I420 picture is 1.4 MB: 41 MB a second at 30 fps copied for nothing
/// when the program passes the picture straight to the encoder).
///
/// A buffer is lent when it is one block of shared memory (memfd, as PipeWire shares buffers between
/// processes) holding the negotiated format laid out as the pipeline lays it out at the buffer's stride,
/// it is not flagged corrupt, and at least `reserve` of the stream's buffers stay with PipeWire and the
/// producer besides the lent ones (the producer never runs short because of a slow reader). Otherwise
/// the picture is copied as before and the buffer goes back at once.
///
/// The camera maps each such block a second time itself, read-only (`SharedMappingView`), when the
/// buffer appears: a lent frame reads that mapping, which stays until the last frame using it goes,
/// whatever PipeWire does with the buffer meanwhile (removed at a renegotiation, or the stream destroyed
/// when the camera stops or its node goes: PipeWire unmaps its own mapping then). When the last frame
/// using a lent buffer goes (a newer picture replaced it, the program and the encoder are done with it),
/// the buffer is handed back without a lock wait (a short Mutex), and the loop queues it to the stream
/// at its next callback or the camera thread's next wake (at most 50 ms).
///
/// `@unchecked Sendable`: `mappings`, `lent`, `count` and `nextLoan` are touched only on the loop thread
/// (stream callbacks) or by the camera thread with the loop lock held; `returned` is a Mutex.
final class PipeWireBufferLoans: @unchecked Sendable {
    /// Buffers never lent: the one the producer fills and the one PipeWire hands over.
    static let reserve = 2
    /// Buffers of the stream, by `pw_buffer` address: the mapping of those that can be lent.
    private var mappings: [UInt: SharedMappingView] = [:]
    /// Lent buffers: their loan number (a buffer given back from an older loan is not queued twice).
    private var lent: [UInt: UInt64] = [:]
    private var count = 0
    private var nextLoan: UInt64 = 0
    /// Given back by the last frame using them: (buffer, loan).
    private let returned = Mutex<[(buffer: UInt, loan: UInt64)]>([])

    /// Loop thread: a buffer of the stream appeared.
    func added(_ buffer: UnsafeMutablePointer<pw_buffer>) {
        count += 1
        guard let spa = buffer.pointee.buffer, spa.pointee.n_datas == 1, let data = spa.pointee.datas?.pointee,
              data.type == SPA_DATA_MemFd.rawValue || data.type == SPA_DATA_MemPtr.rawValue, let start = data.data,
              let mapping = SharedMappingView(of: start, size: Int(data.maxsize)) else { return }
        mappings[UInt(bitPattern: buffer)] = mapping
    }

    /// Loop thread: a buffer of the stream is gone (frames lent from it keep their mapping).
    func removed(_ buffer: UnsafeMutablePointer<pw_buffer>) {
        count = max(0, count - 1)
        mappings[UInt(bitPattern: buffer)] = nil
        lent[UInt(bitPattern: buffer)] = nil
    }

    /// Loop lock held: the stream is gone with all its buffers.
    func removeAll() {
        mappings.removeAll()
        lent.removeAll()
        count = 0
    }

    /// Loop thread: `buffer`'s picture as a frame reading the buffer in place, or nil when it is not
    /// lent (copy it and queue the buffer back). A lent buffer must not be queued back by the caller.
    func lend(_ buffer: UnsafeMutablePointer<pw_buffer>, format: CameraFormat, captureTime: UInt64, sequence: UInt64) -> VideoFrame? {
        let key = UInt(bitPattern: buffer)
        guard lent.count + Self.reserve < count, let mapping = mappings[key], let spa = buffer.pointee.buffer,
              spa.pointee.n_datas == 1, let data = spa.pointee.datas?.pointee, let chunk = data.chunk?.pointee,
              chunk.flags & Int32(SPA_CHUNK_FLAG_CORRUPTED) == 0 else { return nil }
        let pixel = format.pixelFormat
        let offset = Int(chunk.offset % max(data.maxsize, 1)), limit = mapping.size - offset
        let rows = pixel.rowBytes(width: format.width)
        let stride = chunk.stride > 0 ? Int(chunk.stride) : rows[0]
        let planes = pixel.planeLayouts(height: format.height, contiguousWithStride: stride)
        guard planes.count == rows.count, limit > 0, zip(planes, rows).allSatisfy({ plane, row in
            plane.stride >= row && plane.offset >= 0 && plane.offset + max(0, plane.rows - 1) * plane.stride + row <= limit
        }), let bytes = UnsafeMutableRawPointer(bitPattern: mapping.address + UInt(offset)) else { return nil }
        nextLoan += 1
        let loan = nextLoan
        lent[key] = loan
        // The closure keeps the mapping (and so the memory) for as long as the frame lives.
        let storage = FrameStorage(borrowing: bytes, capacity: limit) { [self, mapping] in
            withExtendedLifetime(mapping) {}
            returned.withLock { $0.append((key, loan)) }
        }
        return VideoFrame(format: pixel, width: format.width, height: format.height, planes: planes, storage: storage,
                          captureTime: captureTime, sequence: sequence)
    }

    /// Loop lock held: queues to `stream` the lent buffers given back since the last call.
    func requeue(to stream: OpaquePointer) {
        let back = returned.withLock { list -> [(buffer: UInt, loan: UInt64)] in
            guard !list.isEmpty else { return [] }
            defer { list.removeAll(keepingCapacity: true) }
            return list
        }
        for (key, loan) in back where lent[key] == loan {
            lent[key] = nil
            if let buffer = UnsafeMutablePointer<pw_buffer>(bitPattern: key) { pw_stream_queue_buffer(stream, buffer) }
        }
    }

    /// Buffers lent now (loop thread or loop lock held).
    var lentCount: Int { lent.count }
}
