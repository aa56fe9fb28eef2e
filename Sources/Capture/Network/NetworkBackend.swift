import StudioCore

/// Cameras that are not plugged into this PC, pulled from the URLs of `network.pull`: not selectable
/// (on when the config lists some), each named by its entry (`name:`), reported at start and kept for
/// the whole session; a pull that cannot connect is listed, lost, and tried again by itself.
public struct NetworkBackend: SourceBackend {
    public init() {}
    public var name: BackendName { .network }
    public var summary: String { "cameras pulled from URLs (`network.pull`): RTSP, RTMP, SRT (caller), HLS, MPEG-TS over UDP" }
    public var isSelectable: Bool { false }

    public func makeDiscovery(_ context: BackendContext) throws -> (any CameraDiscovery)? {
        guard !context.networkPulls.isEmpty else { return nil }
        let cameras = try context.networkPulls.map { pull in
            let identity = CameraIdentity(backend: name, identity: pull.identity, displayName: SecretMasking.maskURL(pull.url))
            return NetworkPullCamera(pull: pull, id: try context.namer(identity), log: context.log)
        }
        return NetworkPullDiscovery(cameras: cameras)
    }
}

/// Reports every pull's camera at start; they stay (a pull that is away is a lost camera, not a gone one).
final class NetworkPullDiscovery: CameraDiscovery {
    let cameras: [NetworkPullCamera]
    init(cameras: [NetworkPullCamera]) { self.cameras = cameras }
    func start(onAdded: @escaping @Sendable (any Camera) -> Void, onRemoved: @escaping @Sendable (any Camera) -> Void) {
        for camera in cameras { onAdded(camera) }
    }
    func stop() {}
}
