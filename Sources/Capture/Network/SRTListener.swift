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
public final class SRTListener: Sendable {
    public let spec: SRTListenerSpec
    private let cameras: [CameraID: NetworkPullCamera]
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
        init(spec: SRTListenerSpec) { self.spec = spec }
    }

    public init(spec: SRTListenerSpec, cameras: [NetworkPullCamera], log: @escaping @Sendable (String) -> Void,
                refused: @escaping @Sendable (_ address: String, _ reason: String) -> Void) {
        self.spec = spec
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
        guard var (address, length) = spec.listen.socketAddress else {
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
        log("SRT listener on \(spec.listen) for \(spec.callers.map(\.name.name).joined(separator: ", "))")
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
            guard let name = spec.caller(forStreamID: streamID), let camera = cameras[name] else {
                srt_close(caller)
                continue
            }
            camera.publishStarted(srt: SRTConnection(socket: caller, gate: gate), from: Self.describe(peer))
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
            let shown = id.isEmpty ? "no stream id" : "an unknown stream id"
            refusals.withLock { $0.append((address, shown)) }
            return -1
        }
        if let passphrase = spec.passphrase(for: name) {
            _ = passphrase.withCString { srt_setsockflag(accepted, SRTO_PASSPHRASE, $0, Int32(strlen($0))) }
        }
        return 0
    }
}
