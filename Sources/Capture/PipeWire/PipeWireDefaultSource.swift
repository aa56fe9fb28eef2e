import CPipeWire

/// Follows `default.audio.source` in the daemon's "default" metadata, where a session manager
/// (WirePlumber) keeps the desktop's default microphone: bound when the metadata appears, let go of when
/// it goes. A microphone without a node name follows it (`PipeWireMicrophone`), and discovery tells which
/// source is the default (`PipeWireAudioDiscovery.defaultNodeName`).
///
/// `@unchecked Sendable`: every member is touched with the session's loop lock held, by its owner's
/// thread (`follow`, `drop`, `name`) or by the metadata callback on the loop thread (which holds it).
final class PipeWireDefaultSource: @unchecked Sendable {
    /// The node name default.audio.source names; nil without one (or without a session manager).
    private(set) var name: String?
    private var metadata: OpaquePointer?
    private var metadataID: UInt32 = 0
    private var searchedAt: UInt64 = .max
    private var loop: OpaquePointer?
    private let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    private let events = UnsafeMutablePointer<pw_metadata_events>.allocate(capacity: 1)

    init() {
        hook.initialize(to: spa_hook())
        events.initialize(to: pw_metadata_events())
    }

    deinit {
        hook.deallocate()
        events.deallocate()
    }

    /// Binds the "default" metadata when it appears (and lets go of it when it goes), so `name`
    /// follows default.audio.source. Must hold the loop lock.
    func follow(session: PipeWireSession) {
        if metadata != nil {
            guard session.globals[metadataID] == nil else { return }
            drop()
        }
        // Look again only when the registry changed.
        guard session.generation != searchedAt else { return }
        searchedAt = session.generation
        guard let registry = session.registry,
              let global = session.globals.values.first(where: {
                  $0.type == "PipeWire:Interface:Metadata" && $0.properties["metadata.name"] == "default"
              }),
              let proxy = cpw_registry_bind_metadata(registry, global.id) else { return }
        metadata = proxy
        metadataID = global.id
        loop = session.loop
        events.pointee.version = UInt32(PW_VERSION_METADATA_EVENTS)
        events.pointee.property = { data, subject, key, _, value in
            Unmanaged<PipeWireDefaultSource>.fromOpaque(data!).takeUnretainedValue().changed(subject: subject, key: key, value: value)
            return 0
        }
        cpw_metadata_add_listener(proxy, hook, events, Unmanaged.passUnretained(self).toOpaque())
        // The metadata's current properties arrive before the answer: the first choice sees them.
        session.roundTrip()
    }

    /// Lets go of the metadata (the session is closing or it went away). Must hold the loop lock.
    func drop() {
        if let metadata {
            spa_hook_remove(hook)
            pw_proxy_destroy(metadata)
        }
        metadata = nil
        name = nil
        loop = nil
        searchedAt = .max
    }

    // Callback (loop thread): copy only. A nil key clears everything.
    private func changed(subject: UInt32, key: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?) {
        guard subject == PW_ID_CORE else { return }
        if let key, String(cString: key) != "default.audio.source" { return }
        var found: String?
        if let value {
            var text = [CChar](repeating: 0, count: 1024)
            if cpw_json_object_string(value, "name", &text, Int32(text.count)) > 0 {
                found = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        name = found
        if let loop { pw_thread_loop_signal(loop, false) }
    }
}
