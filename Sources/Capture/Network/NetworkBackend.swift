import StudioCore

/// Cameras that are not plugged into this PC (`network:`): pulled from the URLs of `network.pull`,
/// phones publishing to nginx-rtmp (`network.rtmp`), callers of the SRT listener (`network.srt`) and
/// its capture nodes' cameras (found when each first connects, `SRTListener`). Not
/// selectable (on when the config lists some); each named by its entry, reported at start and kept
/// for the whole session; one that is away is listed and lost, and comes back by itself.
public struct NetworkBackend: SourceBackend {
    public init() {}
    public var name: BackendName { .network }
    public var summary: String { "network cameras: pulled from URLs (RTSP, RTMP, SRT, HLS, UDP), phones through nginx-rtmp, SRT callers" }
    public var isSelectable: Bool { false }

    public func doctorChecks(_ context: BackendDoctorContext) -> [DoctorCheck] { NetworkDoctor.checks(context) }

    public func makeDiscovery(_ context: BackendContext) throws -> (any CameraDiscovery)? {
        guard !context.networkPulls.isEmpty || context.srtListener?.nodes.isEmpty == false else { return nil }
        let backend = name
        let make: @Sendable (NetworkPull) throws -> NetworkPullCamera = { pull in
            let identity = CameraIdentity(backend: backend, identity: pull.identity, displayName: SecretMasking.maskURL(pull.url))
            return NetworkPullCamera(pull: pull, id: try context.namer(identity), decoding: context.networkDecoding, log: context.log)
        }
        let cameras = try context.networkPulls.map(make)
        // Bound now, so a port that cannot be had stops the start with a clear error.
        let listener = try context.srtListener.map { spec in
            let listener = SRTListener(spec: spec, cameras: cameras.filter(\.pull.arrivesOnListener),
                                       makeNodeCamera: { try make(spec.listenerPull($0)) }, log: context.log) { address, reason in
                context.emit(StudioEvent(kind: .ingestRefused, details: ["protocol": "srt", "address": address, "reason": reason]))
            }
            try listener.start()
            return listener
        }
        return NetworkPullDiscovery(cameras: cameras, listener: listener)
    }
}

/// Reports every pull's camera at start; they stay (a pull that is away is a lost camera, not a gone one).
final class NetworkPullDiscovery: CameraDiscovery {
    let cameras: [NetworkPullCamera]
    let listener: SRTListener?
    init(cameras: [NetworkPullCamera], listener: SRTListener?) {
        self.cameras = cameras
        self.listener = listener
    }
    func start(onAdded: @escaping @Sendable (any Camera) -> Void, onRemoved: @escaping @Sendable (any Camera) -> Void) {
        for camera in cameras { onAdded(camera) }
        // A capture node's cameras, as each first connects.
        listener?.reportNodeCameras { onAdded($0) }
    }
    func stop() { listener?.stop() }
}
