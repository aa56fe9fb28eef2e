import CSRT
import Foundation
import Synchronization
import StudioCore
import StudioSystem

/// The SRT listener of network cameras (`network.srt`, `SRTListenerSpec`): one UDP port, many callers,
/// each naming its camera by its stream id. libsrt's listen callback (on libsrt's thread) refuses an
/// unknown id at the handshake with a reason (`SRT_REJX_FORBIDDEN`) and gives a known caller its
/// passphrase (its own, else the listener's), which libsrt then checks; it only reads the immutable
/// spec and notes a refusal (copy only). The accept thread (`net.srt`) waits on an epoll with a short
/// timeout, hands each accepted connection to its camera (a caller that comes back replaces its
/// previous connection at once) and reports the refusals noted (log, history).
///
/// A capture node's camera (`pc2/cam1`, `SRTListenerSpec.nodes`) is made on the accept thread when it
/// first connects (`makeNodeCamera`: named and reported to the discovery's `onAdded`, or held until the
/// discovery starts), and kept: lost while its node is away, handed the node's next connection. A
/// second connection for a node camera whose connection is still up is refused at the handshake
/// (two nodes claiming one name); a caller of `callers:` still replaces its own.
public final class SRTListener: Sendable {
    public let spec: SRTListenerSpec
    private let cameras: [CameraID: NetworkPullCamera]
    /// Makes a node camera's object (the backend names it); its error refuses the connection.
    public typealias NodeCameraMaker = @Sendable (CameraID) throws -> NetworkPullCamera
    private let makeNodeCamera: NodeCameraMaker?
    /// The node cameras made so far, where they go (the discovery's `onAdded`, once it starts), and
    /// those made before it did.
    private let nodeCameras = Mutex<(made: [CameraID: NetworkPullCamera], onAdded: (@Sendable (NetworkPullCamera) -> Void)?,
                                     pending: [NetworkPullCamera])>(([:], nil, []))
    private let gate: Gate
    private let worker = WorkerThread()
    private let socket = Mutex<SRTSOCKET>(SRT_INVALID_SOCK)
    private let log: @Sendable (String) -> Void
    private let refused: @Sendable (_ address: String, _ reason: String) -> Void

    /// What the listen callback reads (immutable) and writes (the refusals, under a lock).
    final class Gate: Sendable {
        let spec: SRTListenerSpec
        let refusals = Mutex<[(address: String, reason: String)]>([])
        let connected = Atomic<Int>(0)
        /// Each node camera's newest connection and when it last received: a second one is refused while
        /// it is up and not silent.
        let nodeSockets = Mutex<[CameraID: (socket: SRTSOCKET, heard: LastHeard)]>([:])
        /// A node camera's connection silent this long gives way to a new call under its name: its node
        /// restarted (killed, or its machine), and SRT sees the peer gone only after its idle timeout
        /// (5 s). A second node claiming a name that sends is refused: it sends 30 pictures a second.
        static let silenceBeforeTakeover: UInt64 = 1_000_000_000
        init(spec: SRTListenerSpec) { self.spec = spec }
    }

    /// When a connection last received a message (CLOCK_MONOTONIC ns; its call's admission before any).
    final class LastHeard: Sendable {
        private let time = Atomic<UInt64>(MonotonicClock.now())
        func note() { time.store(MonotonicClock.now(), ordering: .relaxed) }
        var silentNanoseconds: UInt64 {
            let now = MonotonicClock.now(), last = time.load(ordering: .relaxed)
            return now > last ? now - last : 0
        }
    }

    public init(spec: SRTListenerSpec, cameras: [NetworkPullCamera], makeNodeCamera: NodeCameraMaker? = nil,
                log: @escaping @Sendable (String) -> Void, refused: @escaping @Sendable (_ address: String, _ reason: String) -> Void) {
        self.spec = spec
        self.makeNodeCamera = makeNodeCamera
        self.cameras = Dictionary(uniqueKeysWithValues: cameras.map { ($0.id, $0) })
        gate = Gate(spec: spec)
        self.log = log
        self.refused = refused
    }

    /// Binds and listens; throws with libsrt's words when the port cannot be had.
    public func start() throws {
        srt_startup()
        let listener = srt_create_socket()
        guard listener != SRT_INVALID_SOCK else { throw CaptureError(camera: nil, message: "SRT: cannot create a socket: \(Self.lastError())") }
        var no: Int32 = 0, latency = Int32(spec.latencyMilliseconds)
        srt_setsockflag(listener, SRTO_RCVSYN, &no, Int32(MemoryLayout<Int32>.size))
        srt_setsockflag(listener, SRTO_LATENCY, &latency, Int32(MemoryLayout<Int32>.size))
        guard case (var address, let length)? = spec.listen.socketAddress else {
            srt_close(listener)
            throw CaptureError(camera: nil, message: "SRT: \(spec.listen.host) is no IP address")
        }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { srt_bind(listener, $0, Int32(length)) } }
        guard bound != SRT_ERROR, srt_listen(listener, Int32(SRTListenerSpec.maximumCallers)) != SRT_ERROR else {
            let error = Self.lastError()
            srt_close(listener)
            throw CaptureError(camera: nil, message: "SRT: cannot listen on \(spec.listen): \(error)")
        }
        srt_listen_callback(listener, { opaque, accepted, _, peer, streamID in
            guard let opaque else { return -1 }
            return Unmanaged<Gate>.fromOpaque(opaque).takeUnretainedValue().admit(accepted, peer: peer, streamID: streamID)
        }, Unmanaged.passUnretained(gate).toOpaque())
        socket.withLock { $0 = listener }
        worker.start(name: "net.srt") { [self] in acceptLoop(listener) }
        let names = spec.callers.map(\.name.name) + spec.nodes.map { "\($0.name)\(SRTListenerSpec.nodeSeparator)*" }
        log("SRT listener on \(spec.listen) for \(names.joined(separator: ", "))")
    }

    /// Node cameras go to `onAdded` from now on (those made before it, at once).
    public func reportNodeCameras(to onAdded: @escaping @Sendable (NetworkPullCamera) -> Void) {
        let pending = nodeCameras.withLock { state -> [NetworkPullCamera] in
            state.onAdded = onAdded
            defer { state.pending = [] }
            return state.pending
        }
        for camera in pending { onAdded(camera) }
    }

    /// The camera a connection for `name` goes to: a caller's, or a node camera's (made the first time).
    private func camera(for name: CameraID) -> NetworkPullCamera? {
        if let camera = cameras[name] { return camera }
        guard spec.node(of: name) != nil, let makeNodeCamera else { return nil }
        if let made = nodeCameras.withLock({ $0.made[name] }) { return made }
        let camera: NetworkPullCamera
        do { camera = try makeNodeCamera(name) } catch {
            log("SRT: node camera \(name.name) refused: \(error)")
            refused(name.name, "\(error)")
            return nil
        }
        let report = nodeCameras.withLock { state -> (@Sendable (NetworkPullCamera) -> Void)? in
            state.made[name] = camera
            if state.onAdded == nil { state.pending.append(camera) }
            return state.onAdded
        }
        log("SRT: \(name.name) is a new camera of node \(spec.node(of: name)?.name ?? "?")")
        report?(camera)
        return camera
    }

    public func stop() {
        worker.requestStop()
        worker.stop()
        let listener = socket.withLock { value -> SRTSOCKET in defer { value = SRT_INVALID_SOCK }; return value }
        if listener != SRT_INVALID_SOCK {
            srt_close(listener)
            srt_cleanup()
        }
    }

    private func acceptLoop(_ listener: SRTSOCKET) {
        let poll = srt_epoll_create()
        defer { srt_epoll_release(poll) }
        var events = Int32(SRT_EPOLL_IN.rawValue | SRT_EPOLL_ERR.rawValue)
        srt_epoll_add_usock(poll, listener, &events)
        while !worker.isStopRequested {
            var ready = [SRTSOCKET](repeating: SRT_INVALID_SOCK, count: 4)
            var count: Int32 = 4
            let waited = srt_epoll_wait(poll, &ready, &count, nil, nil, 200, nil, nil, nil, nil)
            let noted: [(address: String, reason: String)] = gate.refusals.withLock { list in
                let taken = list
                list.removeAll()
                return taken
            }
            for refusal in noted {
                log("SRT caller from \(refusal.address) refused: \(refusal.reason)")
                refused(refusal.address, refusal.reason)
            }
            guard waited > 0 else { continue }
            var peer = sockaddr_storage()
            var length = Int32(MemoryLayout<sockaddr_storage>.size)
            let caller = withUnsafeMutablePointer(to: &peer) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { srt_accept(listener, $0, &length) } }
            guard caller != SRT_INVALID_SOCK else { continue }
            let streamID = Self.streamID(of: caller)
            guard let name = spec.caller(forStreamID: streamID), let camera = camera(for: name) else {
                srt_close(caller)
                continue
            }
            let heard = gate.nodeSockets.withLock { $0[name].flatMap { $0.socket == caller ? $0.heard : nil } }
            camera.publishStarted(srt: SRTConnection(socket: caller, gate: gate, heard: heard), from: Self.describe(peer))
        }
    }

    static func streamID(of socket: SRTSOCKET) -> String {
        var buffer = [CChar](repeating: 0, count: 600)
        var length = Int32(buffer.count)
        guard srt_getsockflag(socket, SRTO_STREAMID, &buffer, &length) != SRT_ERROR else { return "" }
        return String(decoding: buffer.prefix(Int(max(0, length))).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func lastError() -> String { String(cString: srt_getlasterror_str()) }

    static func describe(_ address: sockaddr_storage) -> String {
        ListenAddress(socketAddress: address)?.description ?? "an address of another family"
    }
}

extension SRTListener.Gate {
    /// libsrt's listen callback, on libsrt's thread: refuses an unknown stream id or one too many
    /// callers (noting why), and sets a known caller's passphrase. Reads only the immutable spec.
    func admit(_ accepted: SRTSOCKET, peer: UnsafePointer<sockaddr>?, streamID: UnsafePointer<CChar>?) -> Int32 {
        let id = streamID.map { String(cString: $0) } ?? ""
        var storage = sockaddr_storage()
        if let peer {
            let size = peer.pointee.sa_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: peer, count: size)) }
        }
        let address = SRTListener.describe(storage)
        guard connected.load(ordering: .relaxed) < SRTListenerSpec.maximumCallers else {
            srt_setrejectreason(accepted, csrt_reject_overload())
            refusals.withLock { $0.append((address, "too many callers (at most \(SRTListenerSpec.maximumCallers))")) }
            return -1
        }
        guard let name = spec.caller(forStreamID: id) else {
            srt_setrejectreason(accepted, csrt_reject_forbidden())
            let reason = spec.refusal(ofStreamID: id) ?? "an unknown stream id"
            refusals.withLock { $0.append((address, reason)) }
            return -1
        }
        if spec.node(of: name) != nil {
            let taken = nodeSockets.withLock { sockets -> Bool in
                if let previous = sockets[name], srt_getsockstate(previous.socket) == SRTS_CONNECTED,
                   previous.heard.silentNanoseconds < Self.silenceBeforeTakeover { return true }
                sockets[name] = (accepted, SRTListener.LastHeard())
                return false
            }
            guard !taken else {
                srt_setrejectreason(accepted, csrt_reject_conflict())
                refusals.withLock { $0.append((address, "\(name.name) is connected already (a second node claiming its name?)")) }
                return -1
            }
        }
        if let passphrase = spec.passphrase(for: name) {
            _ = passphrase.withCString { srt_setsockflag(accepted, SRTO_PASSPHRASE, $0, Int32(strlen($0))) }
        }
        return 0
    }
}
