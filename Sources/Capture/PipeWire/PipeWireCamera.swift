import CPipeWire
import Synchronization
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// A PipeWire Video/Source node captured through one `pw_stream` of its own.
///
/// `start()` starts the camera's thread (`cap.<id>`), which connects to the daemon (its own
/// `pw_thread_loop`), creates the stream asking for one fixed format (the best of what the node offers
/// for `wanted`, see `PipeWireVideoFormats.choose`) and links it to the node itself through the
/// link-factory (object.linger=false), so it works with or without a session manager. The stream has
/// PW_STREAM_FLAG_DONT_RECONNECT and no autoconnect: when its node goes away the camera becomes `.lost`
/// and stays so; it never shows another node's picture. The stream's process callback only copies the
/// newest buffer into `frames`. An MJPEG-only node (no raw offer fits) is asked for MJPEG: the callback
/// then only copies the newest buffer's compressed bytes and wakes the camera thread, which decodes them
/// (`MJPEGDecoder`, to I420) and publishes; a frame that does not decode is dropped and counted in
/// `framesCorrupt`. The callback also offers every JPEG it takes, as it came and stamped with the same
/// capture time, to `compressedFrames` (a passthrough ISO's bounded queue; a flagged or empty buffer
/// aside, whether it decodes or not: a recording keeps what the camera sent). The camera thread decodes by
/// `demand` (`DemandDecoding`): every frame at full size while the camera is seen, a reduced picture for
/// the tiles or a backup rule, nothing while nobody needs it; the newest JPEG is kept, and decoded as
/// needed the moment the demand rises. An MJPEG camera is live, and counts its frames, as JPEGs arrive,
/// decoded or not.
///
/// A frame's capture time is its buffer's own (the header meta's pts, which the camera asks for) when
/// that is plausible, else the moment the callback dequeued it (`PipeWireBufferTime`).
public final class PipeWireCamera: Camera {
    public let id: CameraID
    public var backend: BackendName { .pipewire }
    public let identity: String
    public let displayName: String
    public let frames = LatestValue<VideoFrame>()
    /// The source node's registry id and name at discovery.
    public let nodeID: UInt32
    public let nodeName: String
    /// What the node offers (its EnumFormat params, read at discovery).
    public let offers: [PipeWireVideoOffer]
    public let offeredModes: [CameraMode]
    /// What the camera publishes (nil when the node offers nothing the pipeline takes); for an MJPEG
    /// node the decoded I420 frames.
    public let requestedFormat: CameraFormat?
    /// What the camera asks the node for on the wire (`NV12`, `MJPG`...), nil when nothing fits.
    public let requestedWireFormat: String?
    /// MJPEG when the camera asks its node for JPEG images; every one is also offered, as it came, to
    /// `compressedFrames` (see `CompressedFrameSource`).
    public let compressedCodec: CompressedCodec?
    public let compressedFrames = CompressedFrameTap()
    /// Who needs the picture at full size (MJPEG nodes decode less while nobody does).
    public let demand: CameraDemand?
    private let core: Core

    /// - Parameters:
    ///   - wanted: the program's size and rate; the closest offered mode is asked for.
    ///   - remote: the daemon's socket (default PIPEWIRE_REMOTE, else pipewire-0 in XDG_RUNTIME_DIR).
    ///   - clock: stamps the frames' arrival (and capture, without a producer's time) and times the
    ///     reduced MJPEG decodes (tests pass a `ManualClock`).
    public init(id: CameraID, identity: String, displayName: String, nodeID: UInt32, nodeSerial: String? = nil, nodeName: String,
                offers: [PipeWireVideoOffer], wanted: CameraFormat, remote: String? = nil, clock: any Clock = .monotonic) {
        self.id = id
        self.identity = identity
        self.displayName = displayName
        self.nodeID = nodeID
        self.nodeName = nodeName
        self.offers = offers
        offeredModes = offers.flatMap(\.modes)
        let selection = PipeWireVideoFormats.select(from: offers, wanted: wanted)
        requestedFormat = selection?.format
        requestedWireFormat = selection?.wireName
        let compressed = selection?.isMJPEG == true ? CompressedCapture(tap: compressedFrames, clock: clock) : nil
        compressedCodec = compressed?.codec
        demand = compressed?.demand
        core = Core(id: id, nodeID: nodeID, nodeSerial: nodeSerial, selection: selection, remote: remote, frames: frames,
                    compressed: compressed, clock: clock)
    }

    deinit { core.requestStop() }

    public var state: CameraState { core.snapshot.state }
    public var currentFormat: CameraFormat? { core.snapshot.currentFormat }
    public var statistics: CaptureStatistics { core.snapshot.statistics }
    /// Why the camera is lost or could not start, if it is.
    public var problem: String? { core.snapshot.problem }

    public func start() { core.start() }
    public func stop() { core.stop() }

    /// Tests: holds the camera's PipeWire loop for `seconds`, as a loop thread starved of CPU is held
    /// up: the process callback cannot run and the buffers that come meanwhile wait in the stream's
    /// queue. False when the camera has no session (not started, or stopped).
    func holdLoop(seconds: Double) -> Bool { core.holdLoop(seconds: seconds) }
}

extension PipeWireCamera {
    struct Snapshot: Sendable {
        var state = CameraState.stopped
        var currentFormat: CameraFormat?
        var statistics = CaptureStatistics()
        var problem: String?
    }
}

extension PipeWireCamera: CompressedFrameSource {}

/// Copies one PipeWire buffer (planes in one data block or one block per plane) into a frame laid out
/// the pipeline's way.
enum PipeWireFrameCopy {
    /// False when the buffer is flagged corrupt or too small for the negotiated format.
    static func copy(datas: UnsafeMutablePointer<spa_data>, count: Int, into frame: VideoFrame) -> Bool {
        let first = datas[0]
        guard let firstBase = first.data, let firstChunk = first.chunk?.pointee,
              firstChunk.flags & Int32(SPA_CHUNK_FLAG_CORRUPTED) == 0 else { return false }
        let rows = frame.format.rowBytes(width: frame.width)
        var sources: [(base: UnsafeRawPointer, stride: Int, limit: Int)] = []
        if count >= frame.planes.count {
            for index in 0..<frame.planes.count {
                let data = datas[index]
                guard let base = data.data, let chunk = data.chunk?.pointee else { return false }
                let offset = Int(chunk.offset % max(data.maxsize, 1))
                let stride = chunk.stride > 0 ? Int(chunk.stride) : rows[index]
                sources.append((UnsafeRawPointer(base) + offset, stride, Int(data.maxsize) - offset))
            }
        } else {
            // All planes in one block, laid out as the table says for the first plane's stride.
            let offset = Int(firstChunk.offset % max(first.maxsize, 1))
            let base = UnsafeRawPointer(firstBase) + offset
            let limit = Int(first.maxsize) - offset
            let stride = firstChunk.stride > 0 ? Int(firstChunk.stride) : rows[0]
            sources = frame.format.planeLayouts(height: frame.height, contiguousWithStride: stride).map {
                (base + $0.offset, $0.stride, limit - $0.offset)
            }
        }
        for (index, plane) in frame.planes.enumerated() {
            let source = sources[index]
            let needed = source.stride * (plane.rows - 1) + rows[index]
            guard source.stride >= rows[index], needed <= source.limit, rows[index] <= plane.stride else { return false }
            let destination = frame.plane(index)
            for row in 0..<plane.rows {
                (destination + row * plane.stride).copyMemory(from: source.base + row * source.stride, byteCount: rows[index])
            }
        }
        return true
    }
}
