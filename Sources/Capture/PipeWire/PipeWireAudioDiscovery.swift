import CPipeWire
import Synchronization
import StudioCore
import StudioSystem

/// One PipeWire Audio/Source as discovery sees it: what identifies it across restarts and replugging,
/// and what ties it to a camera.
public struct PipeWireAudioSource: Sendable, Hashable {
    public enum Kind: String, Sendable {
        /// A device's node (ALSA, Bluetooth...): it names its device (`device.id`).
        case device
        /// Published by a client through its own stream (virtual microphones, filter chains).
        case stream
        /// Made by the daemon's own config (an adapter around a SPA plugin).
        case other
    }

    /// Stable across restarts and replugging: `pipewire:` + node.name, plus the device's serial or bus
    /// path when it has one (two identical USB microphones differ there). The same rule as cameras
    /// (`PipeWireDiscovery.identity`).
    public var identity: String
    public var nodeName: String
    public var displayName: String
    public var kind: Kind
    /// The node's id and serial now (they change when the node comes back).
    public var nodeID: UInt32
    public var nodeSerial: String?
    /// The USB device it belongs to (`usb-<controller>-<port path>`, as V4L2 reports a USB webcam's bus
    /// info), nil when it is not on USB or does not say: a webcam's microphone and its camera share it.
    public var usbDevice: String?
}

/// The key that ties devices on one USB device together, from what they report:
/// - V4L2's bus info (`VIDIOC_QUERYCAP`), `usb-0000:00:14.0-1.4`: already the key;
/// - udev's path (`device.bus-path` of PipeWire's ALSA and V4L2 devices), `pci-0000:00:14.0-usb-0:1.4:1.0`:
///   the controller and the port path, the interface (`:1.0`) dropped;
/// - a sysfs path (`sysfs.path`), `/devices/pci0000:00/0000:00:14.0/usb1/1-1.4/1-1.4:1.2/sound/card1`.
public enum USBDeviceKey {
    public static func fromV4L2(busInfo: String) -> String? { busInfo.hasPrefix("usb-") ? busInfo : nil }

    public static func fromBusPath(_ path: String) -> String? {
        // pci-<controller>-usb-0:<ports>:<config>.<interface>
        guard let range = path.range(of: "-usb-") else { return nil }
        let controller = path[..<range.lowerBound].replacingOccurrences(of: "pci-", with: "")
        let parts = path[range.upperBound...].split(separator: ":")
        guard parts.count >= 2, !controller.isEmpty else { return nil }
        return "usb-\(controller)-\(parts[1])"
    }

    public static func fromSysfs(_ path: String) -> String? {
        let parts = path.split(separator: "/").map(String.init)
        // The controller is the component before `usbN`; the device the one after (`N-<ports>`).
        guard let bus = parts.firstIndex(where: { $0.hasPrefix("usb") && Int($0.dropFirst(3)) != nil }), bus > 0, bus + 1 < parts.count,
              let dash = parts[bus + 1].firstIndex(of: "-") else { return nil }
        return "usb-\(parts[bus - 1])-\(parts[bus + 1][parts[bus + 1].index(after: dash)...])"
    }

    /// From a PipeWire node's properties and its device's (either may carry them).
    public static func fromPipeWire(node: [String: String], device: [String: String] = [:]) -> String? {
        for properties in [device, node] {
            if let path = properties["device.bus-path"], let key = fromBusPath(path) { return key }
            if let path = properties["sysfs.path"] ?? properties["api.alsa.path"], let key = fromSysfs(path) { return key }
        }
        return nil
    }
}

/// Finds every PipeWire Audio/Source (device nodes and stream-published ones), present and lost, live.
///
/// `start` connects and reports the sources present (on the caller's thread); then a thread
/// (`pw.audio.discovery`) follows the registry. With no daemon it says so once through `report` and
/// tries again every `retryInterval`; a daemon that goes away removes all its sources. It also tells
/// which source is the desktop's default microphone and, while it has none, why. The retries are timed
/// on `clock` (tests pass a `ManualClock`).
public final class PipeWireAudioDiscovery: Sendable {
    public let remote: String?
    private let state = Mutex<[UInt32: PipeWireAudioSource]>([:])
    /// The default microphone's node name and why there is no daemon, as of the last look.
    private let graph = Mutex<(defaultNodeName: String?, unreachable: String?)>((nil, nil))
    /// default.audio.source, followed with the session's loop lock held (the discovery's thread, or
    /// `start`'s caller before that thread runs).
    private let defaultSource = PipeWireDefaultSource()
    private let worker = WorkerThread()
    private let retryInterval: Double
    private let clock: any Clock
    private let report: @Sendable (String) -> Void

    public init(remote: String? = nil, retryInterval: Double = 3, clock: any Clock = .monotonic,
                report: @escaping @Sendable (String) -> Void = { _ in }) {
        self.remote = remote
        self.clock = clock
        self.retryInterval = max(0.1, retryInterval)
        self.report = report
    }

    deinit { worker.requestStop() }

    /// The desktop's default microphone: the source the session manager's default.audio.source names,
    /// else the one a microphone without a node name would take (`PipeWireMicrophone.choose`: the
    /// highest priority.session). Known before `onAdded` reports a source; nil without sources.
    public var defaultNodeName: String? { graph.withLock { $0.defaultNodeName } }

    /// Why no daemon answers (its connection's error, or that it went away); nil while connected.
    public var unreachable: String? { graph.withLock { $0.unreachable } }

    /// The sources present now, by node name.
    public var sources: [PipeWireAudioSource] { state.withLock { Array($0.values) }.sorted { $0.nodeName < $1.nodeName } }

    public func start(onAdded: @escaping @Sendable (PipeWireAudioSource) -> Void, onRemoved: @escaping @Sendable (PipeWireAudioSource) -> Void) {
        worker.stop()
        let session = connect(saidMissing: false)
        var scanned: UInt64?
        if let session { scan(session, wait: false, scanned: &scanned, onAdded: onAdded, onRemoved: onRemoved) }
        worker.start(name: "pw.audio.discovery") { [self, scanned] in
            run(session: session, scanned: scanned, onAdded: onAdded, onRemoved: onRemoved)
        }
    }

    private func run(session initial: PipeWireSession?, scanned initialScan: UInt64?,
                     onAdded: (PipeWireAudioSource) -> Void, onRemoved: (PipeWireAudioSource) -> Void) {
        var session = initial, saidMissing = initial == nil, scanned = initialScan
        var nextAttempt = clock.now() + UInt64(retryInterval * 1e9)
        while !worker.isStopRequested {
            guard let connected = session else {
                clock.sleep(until: clock.now() + 50_000_000)
                guard clock.now() >= nextAttempt else { continue }
                nextAttempt = clock.now() + UInt64(retryInterval * 1e9)
                session = connect(saidMissing: saidMissing)
                saidMissing = true
                scanned = nil
                if let session { scan(session, wait: false, scanned: &scanned, onAdded: onAdded, onRemoved: onRemoved) }
                continue
            }
            if !scan(connected, wait: true, scanned: &scanned, onAdded: onAdded, onRemoved: onRemoved) {
                report("PipeWire audio: the daemon went away; its audio sources are removed")
                graph.withLock { $0 = (nil, "the PipeWire daemon went away") }
                connected.withLock { defaultSource.drop() }
                connected.close()
                session = nil
                nextAttempt = clock.now() + UInt64(retryInterval * 1e9)
                for source in state.withLock({ state in defer { state = [:] }; return Array(state.values) }) { onRemoved(source) }
            }
        }
        session?.withLock { defaultSource.drop() }
        session?.close()
    }

    public func stop() { worker.stop() }

    private func connect(saidMissing: Bool) -> PipeWireSession? {
        do {
            let session = try PipeWireSession(name: "pw.audio.discovery", remote: remote)
            session.withLock { _ = session.roundTrip() }
            graph.withLock { $0.unreachable = nil }
            return session
        } catch {
            graph.withLock { $0.unreachable = error.message }
            if !saidMissing { report("PipeWire audio: \(error.message); audio sources will be picked up when it appears") }
            return nil
        }
    }

    /// One look at the registry (waiting up to 0.2 s for a change); false when the daemon went away.
    /// `scanned` is the registry generation last looked at: a change that came while the lock was let go
    /// (between two looks, while `onAdded` ran) is looked at the next time, not waited past.
    @discardableResult
    private func scan(_ session: PipeWireSession, wait: Bool, scanned: inout UInt64?,
                      onAdded: (PipeWireAudioSource) -> Void, onRemoved: (PipeWireAudioSource) -> Void) -> Bool {
        var present: [UInt32: PipeWireAudioSource]?
        let alive = session.withLock { () -> Bool in
            if wait && session.generation == scanned { session.wait(seconds: 0.2) }
            if session.isDisconnected { return false }
            defaultSource.follow(session: session)
            let chosen = PipeWireMicrophone.choose(Array(session.globals.values), nodeName: nil, defaultName: defaultSource.name)
            graph.withLock { $0.defaultNodeName = chosen?.properties["node.name"] }
            guard session.generation != scanned else { return true }
            scanned = session.generation
            present = Self.audioSources(in: session.globals)
            return true
        }
        guard alive else { return false }
        guard let present else { return true }
        let known = state.withLock { $0 }
        for (id, source) in known where present[id]?.nodeSerial != source.nodeSerial {
            state.withLock { $0[id] = nil }
            onRemoved(source)
        }
        for (id, source) in present.sorted(by: { $0.key < $1.key }) where state.withLock({ $0[id] == nil }) {
            state.withLock { $0[id] = source }
            onAdded(source)
        }
        return true
    }

    /// Every Audio/Source among the registry's globals, with its device's properties.
    static func audioSources(in globals: [UInt32: PipeWireGlobal]) -> [UInt32: PipeWireAudioSource] {
        var result: [UInt32: PipeWireAudioSource] = [:]
        for node in globals.values where node.isNode && node.mediaClass == "Audio/Source" {
            let device = node.properties["device.id"].flatMap { UInt32($0) }.flatMap { globals[$0]?.properties } ?? [:]
            let name = node.properties["node.name"] ?? "node \(node.id)"
            let kind: PipeWireAudioSource.Kind = node.properties["device.id"] != nil ? .device
                : node.properties["client.id"] != nil ? .stream : .other
            result[node.id] = PipeWireAudioSource(
                identity: PipeWireDiscovery.identity(ofNode: node.properties, device: device), nodeName: name,
                displayName: node.properties["node.description"] ?? node.properties["node.nick"] ?? name, kind: kind,
                nodeID: node.id, nodeSerial: node.properties["object.serial"], usbDevice: USBDeviceKey.fromPipeWire(node: node.properties, device: device))
        }
        return result
    }
}
