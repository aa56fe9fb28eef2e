import CPipeWire
import Synchronization
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// One object the daemon's registry announced (a node, a port...), with its properties copied.
struct PipeWireGlobal: Sendable, Hashable {
    var id: UInt32
    var type: String
    var properties: [String: String]

    var isNode: Bool { type == "PipeWire:Interface:Node" }
    var isPort: Bool { type == "PipeWire:Interface:Port" }
    var mediaClass: String? { properties["media.class"] }
    /// For a port: the node it belongs to.
    var nodeID: UInt32? { properties["node.id"].flatMap { UInt32($0) } }
    /// For a port: "in" or "out".
    var direction: String? { properties["port.direction"] }
}

enum PipeWireLibrary {
    private static let initialized: Bool = {
        cpw_init()
        return true
    }()

    /// pw_init, once per process.
    static func initialize() { _ = initialized }

    /// Where clients connect: PIPEWIRE_REMOTE when set (an absolute path or a name under
    /// XDG_RUNTIME_DIR), else `pipewire-0` under XDG_RUNTIME_DIR. For messages only.
    static func remoteDescription(_ remote: String?) -> String {
        if let remote { return remote }
        if let env = getenv("PIPEWIRE_REMOTE") { return String(cString: env) }
        let runtime = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) } ?? "$XDG_RUNTIME_DIR"
        return "\(runtime)/pipewire-0"
    }
}

/// A connection to a PipeWire daemon: a `pw_thread_loop` (its own thread), a context, a core and the
/// registry. Registry callbacks only copy what they announce into `globals` and signal; whoever owns
/// the session acts on it from its own thread while holding the loop's lock (`withLock`).
///
/// `@unchecked Sendable`: the C handles are created in `init` and freed in `close()` only; every other
/// use happens with the thread loop's lock held (callbacks run on the loop thread, which holds it), and
/// the copied state (`globals`, `generation`, `isDisconnected`, sync and param answers) is only read or
/// written under that same lock.
final class PipeWireSession: @unchecked Sendable {
    let name: String
    private(set) var loop: OpaquePointer?
    private var context: OpaquePointer?
    private(set) var core: OpaquePointer?
    private(set) var registry: OpaquePointer?
    private let coreHook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    private let registryHook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    private let coreEvents = UnsafeMutablePointer<pw_core_events>.allocate(capacity: 1)
    private let registryEvents = UnsafeMutablePointer<pw_registry_events>.allocate(capacity: 1)
    private var closed = false

    // Under the loop lock.
    private(set) var globals: [UInt32: PipeWireGlobal] = [:]
    /// Bumps on every registry change, so a waiter can tell something happened.
    private(set) var generation: UInt64 = 0
    /// Set when the daemon went away or refused us (core error on the core object).
    private(set) var isDisconnected = false
    private(set) var lastError: String?
    private var lastDoneSeq: Int32 = -1
    private var nextSeq: Int32 = 1
    // Params collected by `enumerateFormats`.
    fileprivate var collectedParams: [[UInt8]] = []

    /// Connects to the daemon at `remote` (default: PIPEWIRE_REMOTE, else pipewire-0 in XDG_RUNTIME_DIR)
    /// and starts the loop thread. Throws when no daemon answers.
    init(name: String, remote: String?) throws(CaptureError) {
        PipeWireLibrary.initialize()
        self.name = name
        coreHook.initialize(to: spa_hook())
        registryHook.initialize(to: spa_hook())
        coreEvents.initialize(to: pw_core_events())
        registryEvents.initialize(to: pw_registry_events())
        guard let loop = pw_thread_loop_new(name, nil) else {
            throw CaptureError(camera: nil, message: "pw_thread_loop_new failed")
        }
        self.loop = loop
        guard let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else {
            close()
            throw CaptureError(camera: nil, message: "pw_context_new failed")
        }
        self.context = context
        let properties = cpw_properties_new("application.name", "studio")
        if let remote { pw_properties_set(properties, "remote.name", remote) }
        guard let core = pw_context_connect(context, properties, 0) else {
            let code = errno
            close()
            throw CaptureError(camera: nil, message: "no PipeWire daemon at \(PipeWireLibrary.remoteDescription(remote)) (pw_context_connect: \(String(cString: strerror(code))))")
        }
        self.core = core
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        coreEvents.pointee.version = UInt32(PW_VERSION_CORE_EVENTS)
        coreEvents.pointee.done = { data, id, seq in
            let session = Unmanaged<PipeWireSession>.fromOpaque(data!).takeUnretainedValue()
            if id == PW_ID_CORE { session.lastDoneSeq = max(session.lastDoneSeq, seq) }
            pw_thread_loop_signal(session.loop, false)
        }
        coreEvents.pointee.error = { data, id, _, res, message in
            let session = Unmanaged<PipeWireSession>.fromOpaque(data!).takeUnretainedValue()
            if id == PW_ID_CORE {
                session.isDisconnected = true
                session.lastError = "\(message.map { String(cString: $0) } ?? "error") (\(String(cString: cpw_strerror(res))))"
            }
            pw_thread_loop_signal(session.loop, false)
        }
        cpw_core_add_listener(core, coreHook, coreEvents, opaque)
        registry = cpw_core_get_registry(core)
        registryEvents.pointee.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
        registryEvents.pointee.global = { data, id, _, type, _, props in
            let session = Unmanaged<PipeWireSession>.fromOpaque(data!).takeUnretainedValue()
            let global = PipeWireGlobal(id: id, type: type.map { String(cString: $0) } ?? "", properties: PipeWireSession.dictionary(props))
            session.globals[id] = global
            session.generation &+= 1
            pw_thread_loop_signal(session.loop, false)
        }
        registryEvents.pointee.global_remove = { data, id in
            let session = Unmanaged<PipeWireSession>.fromOpaque(data!).takeUnretainedValue()
            session.globals[id] = nil
            session.generation &+= 1
            pw_thread_loop_signal(session.loop, false)
        }
        if let registry { cpw_registry_add_listener(registry, registryHook, registryEvents, opaque) }
        if pw_thread_loop_start(loop) < 0 {
            close()
            throw CaptureError(camera: nil, message: "pw_thread_loop_start failed")
        }
    }

    deinit {
        close()
        coreHook.deallocate()
        registryHook.deallocate()
        coreEvents.deallocate()
        registryEvents.deallocate()
    }

    /// Runs `body` with the loop's lock held (the loop thread is then between callbacks).
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        return try body()
    }

    /// Waits for a callback's signal or the timeout. Must hold the lock.
    func wait(seconds: Double) {
        // pw_thread_loop_timed_wait takes whole seconds; use the absolute-time variant for sub-second waits.
        var deadline = timespec()
        pw_thread_loop_get_time(loop, &deadline, Int64(seconds * 1e9))
        _ = pw_thread_loop_timed_wait_full(loop, &deadline)
    }

    /// A round trip to the daemon: when it returns true, every event the daemon sent before answering
    /// (registry globals, params) has been handled. Must hold the lock.
    @discardableResult
    func roundTrip(timeout: Double = 2) -> Bool {
        guard let core, !isDisconnected else { return false }
        let seq = nextSeq
        nextSeq += 1
        let sent = cpw_core_sync(core, seq)
        guard sent >= 0 else { return false }
        // pw_core_sync returns the seq actually used on the wire.
        let expected = sent
        // Real time: the daemon's answer is waited for in pw_thread_loop's timed wait (CLOCK_MONOTONIC).
        let deadline = MonotonicClock.now() + UInt64(timeout * 1e9)
        while lastDoneSeq < expected && !isDisconnected {
            let now = MonotonicClock.now()
            if now >= deadline { return false }
            wait(seconds: Double(deadline - now) / 1e9)
        }
        return !isDisconnected
    }

    /// The EnumFormat params of node `id`, each copied out of the daemon's answer. Must hold the lock.
    func enumerateFormats(ofNode id: UInt32) -> [[UInt8]] {
        guard let registry, let node = cpw_registry_bind_node(registry, id) else { return [] }
        let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
        hook.initialize(to: spa_hook())
        let events = UnsafeMutablePointer<pw_node_events>.allocate(capacity: 1)
        events.initialize(to: pw_node_events())
        events.pointee.version = UInt32(PW_VERSION_NODE_EVENTS)
        events.pointee.param = { data, _, _, _, _, param in
            let session = Unmanaged<PipeWireSession>.fromOpaque(data!).takeUnretainedValue()
            guard let param else { return }
            let size = Int(param.pointee.size) + MemoryLayout<spa_pod>.size
            session.collectedParams.append(Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(param), count: size)))
        }
        collectedParams = []
        cpw_node_add_listener(node, hook, events, Unmanaged.passUnretained(self).toOpaque())
        cpw_node_enum_formats(node, 0)
        roundTrip()
        let params = collectedParams
        collectedParams = []
        spa_hook_remove(hook)
        pw_proxy_destroy(node)
        hook.deallocate()
        events.deallocate()
        return params
    }

    /// Asks the link-factory for a link between two ports; the link lives as long as this client
    /// (object.linger=false). Must hold the lock. Returns the proxy (destroy it to unlink).
    func createLink(outputNode: UInt32, outputPort: UInt32, inputNode: UInt32, inputPort: UInt32) -> OpaquePointer? {
        guard let core else { return nil }
        return cpw_core_create_link(core, outputNode, outputPort, inputNode, inputPort)
    }

    /// Ports of `node` in `direction` ("in"/"out"), by id. Must hold the lock.
    func ports(ofNode node: UInt32, direction: String) -> [PipeWireGlobal] {
        globals.values.filter { $0.isPort && $0.nodeID == node && $0.direction == direction }.sorted { $0.id < $1.id }
    }

    /// Puts the output side of an audio node in DSP mode (one port per channel), as a session manager
    /// does before it links a stream: a `pw_stream` published as an Audio/Source has no ports until
    /// someone sets its adapter's PortConfig. The channels come from the node's offered format (stereo
    /// FL FR when it offers none). Must hold the lock. Returns false when the daemon refused.
    @discardableResult
    func configureDSPOutput(ofNode id: UInt32, rate: Int) -> Bool {
        var positions = [UInt32](repeating: 0, count: 64)
        var channels: UInt32 = 0
        for format in enumerateFormats(ofNode: id) where channels == 0 {
            channels = format.withUnsafeBytes { raw in
                cpw_parse_audio_channels(raw.baseAddress!.assumingMemoryBound(to: spa_pod.self), &positions, UInt32(positions.count))
            }
        }
        if channels == 0 || positions.prefix(Int(min(channels, 64))).allSatisfy({ $0 == 0 }) {
            channels = 2
            positions[0] = SPA_AUDIO_CHANNEL_FL.rawValue
            positions[1] = SPA_AUDIO_CHANNEL_FR.rawValue
        }
        guard let registry, let node = cpw_registry_bind_node(registry, id) else { return false }
        defer { pw_proxy_destroy(node) }
        var bytes = [UInt8](repeating: 0, count: 2048)
        let result = bytes.withUnsafeMutableBytes { raw -> Int32 in
            var builder = cpw_pod_builder(raw.baseAddress, UInt32(raw.count))
            guard let param = cpw_build_dsp_port_config(&builder, UInt32(rate), min(channels, 64), positions) else { return -1 }
            return cpw_node_set_param(node, SPA_PARAM_PortConfig.rawValue, param)
        }
        roundTrip()
        return result >= 0
    }

    /// Stops the loop thread and frees everything. Safe to call twice; not from the loop thread.
    func close() {
        guard !closed else { return }
        closed = true
        if let loop { pw_thread_loop_stop(loop) }
        if let registry {
            spa_hook_remove(registryHook)
            pw_proxy_destroy(registry)
        }
        registry = nil
        if let core {
            spa_hook_remove(coreHook)
            pw_core_disconnect(core)
        }
        core = nil
        if let context { pw_context_destroy(context) }
        context = nil
        if let loop { pw_thread_loop_destroy(loop) }
        loop = nil
    }

    static func dictionary(_ dict: UnsafePointer<spa_dict>?) -> [String: String] {
        guard let dict, let items = dict.pointee.items else { return [:] }
        var result: [String: String] = [:]
        for index in 0..<Int(dict.pointee.n_items) {
            let item = items[index]
            guard let key = item.key, let value = item.value else { continue }
            result[String(cString: key)] = String(cString: value)
        }
        return result
    }
}
