import StudioCore
#if canImport(Glibc)
import Glibc
#endif

/// Video/Source nodes of the desktop's PipeWire daemon (portals, virtual cameras): the daemon at
/// PIPEWIRE_REMOTE, else pipewire-0 in XDG_RUNTIME_DIR; none there: said once in the log, retried every
/// few seconds, cameras added when it appears. With V4L2 on too, PipeWire's own views of /dev/video
/// devices are left to the V4L2 backend (one webcam, one camera).
public struct PipeWireBackend: SourceBackend {
    public init() {}
    public var name: BackendName { .pipewire }
    public var summary: String { "the desktop's PipeWire cameras (Video/Source nodes: portals, virtual cameras)" }
    public var isSelectable: Bool { true }

    public func makeDiscovery(_ context: BackendContext) throws -> (any CameraDiscovery)? {
        let program = context.program
        return PipeWireDiscovery(
            namer: context.namer,
            wanted: CameraFormat(pixelFormat: .i420, width: program.width, height: program.height, frameRate: program.frameRate),
            skipsV4L2Devices: context.enabled.contains(.v4l2),
            report: context.log)
    }

    /// The daemon's Audio/Source nodes (microphones, virtual sources), watched as they come and go.
    public func makeMicrophoneDiscovery(log: @escaping @Sendable (String) -> Void) -> (any MicrophoneDiscovery)? {
        PipeWireAudioDiscovery(report: log)
    }

    /// Whether a PipeWire daemon answers where the cameras (and microphones) would be looked for.
    public func doctorChecks(_ context: BackendDoctorContext) -> [DoctorCheck] {
        [Self.pipeWire(environment: context.environment)]
    }

    public static func pipeWire(environment: [String: String]) -> DoctorCheck {
        var socket = environment["PIPEWIRE_REMOTE"] ?? ""
        if socket.isEmpty, let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { socket = runtime + "/pipewire-0" }
        guard !socket.isEmpty, socket.hasPrefix("/") else {
            return DoctorCheck("pipewire", .warning, "no PipeWire socket to look for (XDG_RUNTIME_DIR and PIPEWIRE_REMOTE unset)",
                         fix: "PipeWire cameras need a PipeWire daemon (a desktop session); V4L2 and test cameras work without")
        }
        var info = stat()
        guard stat(socket, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else {
            return DoctorCheck("pipewire", .warning, "no PipeWire daemon at \(socket)",
                         fix: "start PipeWire (systemctl --user start pipewire) to use PipeWire cameras and microphones")
        }
        return DoctorCheck("pipewire", .ok, "PipeWire socket \(socket)")
    }
}
