import StudioCore

/// Media players (`players:`): each a camera named by its entry that plays its items (video files,
/// stills) on the program clock (`PlayerCamera`). Not selectable (on when the config lists some). Every
/// item is opened and its first picture decoded at start and on `studio reload` (`checkItems`), so a
/// missing file, a codec libavcodec lacks, a file of 0 frames or a still too large refuses the start (or
/// the reload) with the file's name.
public struct PlayerBackend: SourceBackend {
    public init() {}
    public var name: BackendName { .player }
    public var summary: String { "media players: clips (video files) and stills played on the program clock" }
    public var isSelectable: Bool { false }

    public func makeDiscovery(_ context: BackendContext) throws -> (any CameraDiscovery)? {
        guard !context.players.isEmpty else { return nil }
        try Self.checkItems(context.players)
        let cameras = try context.players.map { spec in
            let identity = CameraIdentity(backend: name, identity: spec.identity, displayName: "player " + spec.name.name)
            return PlayerCamera(spec: spec, id: try context.namer(identity), rate: context.program.frameRate,
                                programOrigin: context.programOrigin, log: context.log, emit: context.emit)
        }
        return PlayerDiscovery(cameras: cameras)
    }

    /// Opens every item of `players` and decodes its first picture; the first that fails is the error,
    /// naming its player and its file.
    public static func checkItems(_ players: [PlayerSpec]) throws(CaptureError) {
        for spec in players {
            for path in spec.items {
                do { try PlayerReader.check(path) } catch {
                    throw CaptureError(camera: spec.name, message: "players: \(error.description)")
                }
            }
        }
    }
}

/// Reports every player at start; they stay for the session.
final class PlayerDiscovery: CameraDiscovery {
    let cameras: [PlayerCamera]
    init(cameras: [PlayerCamera]) { self.cameras = cameras }
    func start(onAdded: @escaping @Sendable (any Camera) -> Void, onRemoved: @escaping @Sendable (any Camera) -> Void) {
        for camera in cameras { onAdded(camera) }
    }
    func stop() {}
}
