import Foundation
import StudioCore
import StudioSystem

/// What `studio doctor` says about the network cameras of the config: whether the SRT listener's UDP
/// port can be had, and whether an RTMP server answers where the phones' streams are pulled from.
enum NetworkDoctor {
    static func checks(_ context: BackendDoctorContext) -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        if !context.networkPulls.isEmpty {
            let names = context.networkPulls.map(\.name.name).joined(separator: ", ")
            checks.append(DoctorCheck("network", .ok, "\(context.networkPulls.count) network camera(s): \(names)"))
        }
        if let listener = context.srtListener { checks.append(srtPort(listener.listen)) }
        if let server = context.rtmpServer { checks.append(rtmpServer(server)) }
        return checks
    }

    /// Binds the listener's UDP port for a moment: free, or held (by a running studio, or another program).
    static func srtPort(_ listen: ListenAddress) -> DoctorCheck {
        guard case (var storage, let length)? = listen.socketAddress else { return DoctorCheck("network", .problem, "SRT listener: \(listen.host) is no IP address") }
        let socket = Glibc.socket(Int32(storage.ss_family), Int32(SOCK_DGRAM.rawValue), 0)
        guard socket >= 0 else { return DoctorCheck("network", .warning, "SRT listener \(listen): no UDP socket to try it with") }
        defer { close(socket) }
        let bound = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            return DoctorCheck("network", .warning, "SRT listener \(listen): the UDP port is not free (\(reason))",
                               fix: "a running studio holds it (fine); otherwise choose another port in network.srt.listen")
        }
        return DoctorCheck("network", .ok, "SRT listener \(listen): the UDP port is free")
    }

    /// Connects to the RTMP server the phones' streams are pulled from (TCP, 1 s).
    static func rtmpServer(_ server: String) -> DoctorCheck {
        guard let url = URL(string: server), let host = url.host else { return DoctorCheck("network", .problem, "network.rtmp.server \(server) is no URL") }
        let port = url.port ?? 1935
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
            return DoctorCheck("network", .problem, "the RTMP server \(host) of network.rtmp.server is not found")
        }
        defer { freeaddrinfo(found) }
        let socket = Glibc.socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard socket >= 0 else { return DoctorCheck("network", .warning, "no TCP socket to try the RTMP server with") }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(socket, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            return DoctorCheck("network", .problem, "no RTMP server answers at \(host):\(port) (network.rtmp.server): phones cannot publish",
                               fix: "run nginx with the RTMP module and deploy/nginx-rtmp-ingest.conf (its on_publish calls this studio)")
        }
        return DoctorCheck("network", .ok, "an RTMP server answers at \(host):\(port); its on_publish must call /api/v1/ingest/rtmp (deploy/nginx-rtmp-ingest.conf)")
    }
}
