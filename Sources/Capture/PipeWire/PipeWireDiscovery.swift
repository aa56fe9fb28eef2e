import CPipeWire
import Synchronization
import StudioCore
import StudioSystem

/// Finds PipeWire cameras: every node with media.class `Video/Source` in the daemon's registry, live.
///
/// `start` connects and reports the cameras present (on the caller's thread), then a thread
/// (`pw.discovery`) follows the registry: a node added becomes `onAdded` (a `PipeWireCamera`, not
/// started, named by the namer from its identity), a node removed becomes `onRemoved` (the camera
/// stopped first). With no daemon reachable it says so once through `report` and tries again every
/// `retryInterval` seconds; a daemon that goes away removes all its cameras and is retried the same way.
public final class PipeWireDiscovery: CameraDiscovery {
    public let remote: String?
    public let wanted: CameraFormat
    public let retryInterval: Double
    private let core: Core

    /// - Parameters:
    ///   - namer: gives each node's identity its `camN` (called on the discovery's thread).
    ///   - wanted: the program's size and rate; each camera asks its node for the closest offer.
    ///   - remote: the daemon's socket; nil: PIPEWIRE_REMOTE, else pipewire-0 in XDG_RUNTIME_DIR.
    ///   - report: one line for the operator's log when the daemon is missing, found or gone, or a node
    ///     cannot be named. Must not block.
    ///   - skipsV4L2Devices: leave out nodes that PipeWire's own V4L2 monitor made from /dev/video
    ///     devices (`device.api` = `v4l2`): when the server also captures V4L2 directly, the same webcam
    ///     would otherwise be listed twice, and the two captures would fight over the device.
    ///   - clock: times the retries, and is handed to each camera it makes (tests pass a `ManualClock`).
    public init(namer: @escaping CameraNamer, wanted: CameraFormat = CameraFormat(pixelFormat: .i420, width: 1280, height: 720, frameRate: Rational(30)),
                remote: String? = nil, retryInterval: Double = 3, skipsV4L2Devices: Bool = false, clock: any Clock = .monotonic,
                report: @escaping @Sendable (String) -> Void = { _ in }) {
        self.remote = remote
        self.wanted = wanted
        self.retryInterval = max(0.1, retryInterval)
        core = Core(namer: namer, wanted: wanted, remote: remote, retryInterval: self.retryInterval, skipsV4L2Devices: skipsV4L2Devices,
                    clock: clock, report: report)
    }

    /// Whether a node is one of PipeWire's V4L2-monitor cameras (a /dev/video device seen through
    /// PipeWire): its `object.path` is `v4l2:/dev/videoN`, or it or its device says `device.api` = v4l2.
    /// (The registry announces only some properties of a node; `object.path` is among them.)
    public static func isV4L2Device(node properties: [String: String], device: [String: String] = [:]) -> Bool {
        properties["object.path"]?.hasPrefix("v4l2:") == true || properties["device.api"] == "v4l2"
            || device["device.api"] == "v4l2" || properties["api.v4l2.path"] != nil
    }

    deinit { core.worker.requestStop() }

    public func start(onAdded: @escaping @Sendable (any Camera) -> Void, onRemoved: @escaping @Sendable (any Camera) -> Void) {
        core.start(onAdded: onAdded, onRemoved: onRemoved)
    }

    public func stop() { core.stop() }

    /// True while connected to a daemon.
    public var isConnected: Bool { core.status.withLock { $0.connected } }
    /// The cameras reported and not removed, by name.
    public var cameras: [PipeWireCamera] { core.status.withLock { $0.cameras }.sorted { $0.id < $1.id } }

    /// The stable identity of a Video/Source node: `pipewire:` + node.name, plus the device's serial or
    /// bus path when the node has them (two identical USB cameras differ there).
    public static func identity(ofNode properties: [String: String], device: [String: String] = [:]) -> String {
        let name = properties["node.name"] ?? properties["object.path"] ?? "unnamed"
        let extra = device["device.serial"] ?? properties["device.serial"] ?? device["device.bus-path"] ?? properties["device.bus-path"]
        return extra.map { "pipewire:\(name)#\($0)" } ?? "pipewire:\(name)"
    }

    struct Status: Sendable {
        var connected = false
        var cameras: [PipeWireCamera] = []
    }

    /// `@unchecked Sendable`: `session`, `known`, `pending` and the callbacks are used only by the
    /// thread that runs `start`'s first scan and then by the discovery thread, never at once (the
    /// thread starts after the scan); what other threads read is in `status`.
    final class Core: @unchecked Sendable {
        let namer: CameraNamer
        let wanted: CameraFormat
        let remote: String?
        let retryInterval: Double
        let skipsV4L2Devices: Bool
        let clock: any Clock
        let report: @Sendable (String) -> Void
        let worker = WorkerThread()
        let status = Mutex(Status())
        private var session: PipeWireSession?
        private var known: [UInt32: (serial: String?, camera: PipeWireCamera)] = [:]
        /// Nodes whose formats could not be read yet, with the number of tries.
        private var pending: [UInt32: Int] = [:]
        private var seenGeneration: UInt64 = .max
        private var saidMissing = false
        private var onAdded: (@Sendable (any Camera) -> Void)?
        private var onRemoved: (@Sendable (any Camera) -> Void)?

        init(namer: @escaping CameraNamer, wanted: CameraFormat, remote: String?, retryInterval: Double, skipsV4L2Devices: Bool,
             clock: any Clock, report: @escaping @Sendable (String) -> Void) {
            self.skipsV4L2Devices = skipsV4L2Devices
            self.clock = clock
            self.namer = namer
            self.wanted = wanted
            self.remote = remote
            self.retryInterval = retryInterval
            self.report = report
        }

        func start(onAdded: @escaping @Sendable (any Camera) -> Void, onRemoved: @escaping @Sendable (any Camera) -> Void) {
            worker.stop()
            self.onAdded = onAdded
            self.onRemoved = onRemoved
            connect()
            if session != nil { scan() }
            worker.start(name: "pw.discovery") { [self] in run() }
        }

        func stop() {
            worker.stop()
            session?.close()
            session = nil
            status.withLock { $0.connected = false }
        }

        private func run() {
            // A discovery dropped without stop(): its connection ends with the thread.
            defer {
                session?.close()
                session = nil
                status.withLock { $0.connected = false }
            }
            var nextAttempt = clock.now() + UInt64(retryInterval * 1e9)
            while !worker.isStopRequested {
                if session == nil {
                    clock.sleep(until: clock.now() + 50_000_000)
                    guard clock.now() >= nextAttempt else { continue }
                    nextAttempt = clock.now() + UInt64(retryInterval * 1e9)
                    connect()
                    if session == nil { continue }
                }
                scan()
            }
        }

        private func connect() {
            do {
                session = try PipeWireSession(name: "pw.discovery", remote: remote)
                seenGeneration = .max
                status.withLock { $0.connected = true }
                if saidMissing { report("PipeWire: connected to \(PipeWireLibrary.remoteDescription(remote))") }
                saidMissing = false
            } catch {
                if !saidMissing {
                    report("PipeWire: \(error.message); PipeWire cameras will be picked up when it appears (retrying every \(retryInterval) s)")
                    saidMissing = true
                }
            }
        }

        /// One look at the registry: waits up to 0.2 s for a change, then reports what was added or removed.
        private func scan() {
            guard let session else { return }
            var lost = false, changed = false
            var nodes: [PipeWireGlobal] = []
            var devices: [UInt32: [String: String]] = [:]
            var offers: [UInt32: [PipeWireVideoOffer]] = [:]
            session.withLock {
                if seenGeneration == .max {
                    session.roundTrip()
                } else if session.generation == seenGeneration, pending.isEmpty {
                    session.wait(seconds: 0.2)
                }
                if session.isDisconnected {
                    lost = true
                    return
                }
                guard session.generation != seenGeneration || !pending.isEmpty else { return }
                changed = true
                seenGeneration = session.generation
                nodes = session.globals.values.filter { node in
                    guard node.isNode, node.mediaClass == "Video/Source" else { return false }
                    guard skipsV4L2Devices else { return true }
                    let device = node.properties["device.id"].flatMap { UInt32($0) }.flatMap { session.globals[$0]?.properties } ?? [:]
                    return !PipeWireDiscovery.isV4L2Device(node: node.properties, device: device)
                }.sorted { $0.id < $1.id }
                for node in nodes where known[node.id].map({ $0.serial != node.properties["object.serial"] }) ?? true {
                    offers[node.id] = session.enumerateFormats(ofNode: node.id).flatMap(PipeWireVideoFormats.offers(fromPod:))
                    if let device = node.properties["device.id"].flatMap({ UInt32($0) }), let global = session.globals[device] {
                        devices[node.id] = global.properties
                    }
                }
            }
            if lost {
                report("PipeWire: the daemon went away (\(session.withLock { session.lastError } ?? "disconnected")); its cameras are removed")
                session.close()
                self.session = nil
                status.withLock { $0.connected = false }
                saidMissing = true
                for id in known.keys.sorted() { remove(id) }
                return
            }
            guard changed else { return }
            let present = Dictionary(nodes.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            // Removed first (an id may come back as a different node: the daemon reuses ids).
            for (id, entry) in known where present[id].map({ $0.properties["object.serial"] != entry.serial }) ?? true {
                remove(id)
            }
            for node in nodes where known[node.id] == nil {
                let nodeOffers = offers[node.id] ?? []
                // A node just created may not have published its formats yet: look again a few times.
                if nodeOffers.isEmpty, pending[node.id, default: 0] < 5 {
                    pending[node.id, default: 0] += 1
                    continue
                }
                pending[node.id] = nil
                add(node, device: devices[node.id] ?? [:], offers: nodeOffers)
            }
            pending = pending.filter { present[$0.key] != nil }
            if !pending.isEmpty { MonotonicClock.sleep(seconds: 0.1) }
        }

        private func add(_ node: PipeWireGlobal, device: [String: String], offers: [PipeWireVideoOffer]) {
            let identity = PipeWireDiscovery.identity(ofNode: node.properties, device: device)
            let name = node.properties["node.description"] ?? node.properties["node.nick"] ?? node.properties["node.name"] ?? "PipeWire camera \(node.id)"
            let id: CameraID
            do {
                id = try namer(CameraIdentity(backend: .pipewire, identity: identity, displayName: name))
            } catch {
                report("PipeWire: cannot name camera \(identity): \(error)")
                known[node.id] = nil
                return
            }
            let camera = PipeWireCamera(id: id, identity: identity, displayName: name, nodeID: node.id,
                                        nodeSerial: node.properties["object.serial"], nodeName: node.properties["node.name"] ?? "",
                                        offers: offers, wanted: wanted, remote: remote, clock: clock)
            known[node.id] = (node.properties["object.serial"], camera)
            status.withLock { $0.cameras.append(camera) }
            onAdded?(camera)
        }

        private func remove(_ id: UInt32) {
            guard let entry = known.removeValue(forKey: id) else { return }
            entry.camera.stop()
            status.withLock { $0.cameras.removeAll { $0 === entry.camera } }
            onRemoved?(entry.camera)
        }
    }
}
