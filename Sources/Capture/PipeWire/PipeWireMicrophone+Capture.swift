import CPipeWire
import Synchronization
import StudioCore
import StudioSystem

extension PipeWireMicrophone {
    /// One PipeWire microphone as an input of an `AudioInputSet` (`PipeWireMicrophone.input`): the
    /// PipeWire backend of a `TimedAudioInput`, which keeps the jitter buffer, the resampling and the
    /// counters. Three threads touch it, and never the same mutable state:
    /// - the connect thread (`connector`, named after the clock's thread plus `.conn`, started by `begin`
    ///   and joined by `end`) does everything that waits on the daemon: it connects, finds the node,
    ///   creates and links the stream, notices loss and tears a dead session down (`housekeeping`).
    ///   Those calls block (round trips of up to 2 s, a daemon that does not answer, a loaded machine),
    ///   so they never run on the clock's thread, which an `AudioInputSet` shares among all its inputs.
    /// - PipeWire's data thread runs `process` (`PW_STREAM_FLAG_RT_PROCESS`), which copies each quantum
    ///   into the timed input (`push`).
    /// - the clock's thread (`fill`, `stalled`, `begin`) only reads the timed input: it never waits on
    ///   PipeWire.
    ///
    /// `@unchecked Sendable`: `session`, `stream`, `links`, hooks, `current`, `defaultSource`, `nextAttempt`,
    /// `saidMissing`, `configuredPorts` and `streamCreatedAt` are touched only by the connect thread
    /// (holding the loop lock for every PipeWire call) and by the stream's callbacks on the loop thread
    /// (which hold that lock), except `process`, which runs on PipeWire's data thread and reaches the
    /// stream only through `processGate`, which teardown empties before it disconnects the stream (so no
    /// `process` runs past that point). What the threads share crosses in `input` (its own locks) and
    /// `quanta` (atomic). After `end` has joined the connect thread, the clock's thread (its loop over)
    /// tears the rest down.
    final class Capture: ClockedAudioInput, @unchecked Sendable {
        let nodeName: String?
        let remote: String?
        /// The jitter buffer, resampling and counters this backend feeds.
        let input: TimedAudioInput
        var format: AudioFormat { input.format }
        var clock: any Clock { input.clock }
        let retryInterval: Double
        let threadName: String
        let report: @Sendable (String) -> Void
        /// The connect thread (see the type's doc).
        let connector = WorkerThread()
        /// Buffers the stream delivered (with and without samples), for test messages.
        let quanta = Atomic<Int64>(0)
        let lastChunk = Mutex((0, 0, 0, 0))

        private var session: PipeWireSession?
        private var stream: OpaquePointer?
        /// The stream's address as `process` (on PipeWire's data thread) sees it: 0 once teardown began.
        /// Held for the whole callback, so teardown taking it waits for a callback in flight.
        private let processGate = Mutex<Int>(0)
        private var links: [OpaquePointer] = []
        /// The node captured (id and serial), once linked or while linking.
        private var current: (id: UInt32, serial: String?, name: String)?
        private var streamCreatedAt: UInt64 = 0
        private let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
        private let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
        private var nextAttempt: UInt64 = 0
        /// Whether this node's ports were configured by us (a stream-published source has none before).
        private var configuredPorts = false
        private var saidMissing = false
        /// default.audio.source (followed only without `nodeName`).
        private let defaultSource = PipeWireDefaultSource()

        init(nodeName: String?, input: TimedAudioInput, remote: String?, retryInterval: Double, threadName: String,
             report: @escaping @Sendable (String) -> Void) {
            self.nodeName = nodeName
            self.input = input
            self.remote = remote
            self.retryInterval = retryInterval
            self.threadName = threadName
            self.report = report
            hook.initialize(to: spa_hook())
            events.initialize(to: pw_stream_events())
        }

        deinit {
            hook.deallocate()
            events.deallocate()
        }

        var description: String { input.description }
        var status: AudioInputStatus { input.status }

        // The clock's side: the timed input's, and the connect thread goes with the clock.

        /// The counters start over, then the connect thread starts (after the reset, so what it reports is kept).
        func begin(first: Int64, origin: UInt64) {
            input.begin(first: first, origin: origin)
            startConnecting()
        }

        func fill(_ block: inout AudioChunk) { input.fill(&block) }
        func stalled(_ silence: AudioChunk) { input.stalled(silence) }
        func end() { shutdown() }

        /// How often the connect thread looks at the session (real time: the registry's news, a node
        /// gone or back, ports to link). Retries of a connection wait `retryInterval` on `clock`.
        static let connectPollInterval: UInt64 = 20_000_000
        /// The same once the source is linked and nothing is left to do but notice that it (or the
        /// daemon) went away or the default moved: every input has a connect thread, and their wake-ups
        /// are most of what they cost.
        static let linkedPollInterval: UInt64 = 100_000_000

        /// Starts the connect thread (from `begin`, on the clock's thread: once per start, it only
        /// creates the thread; a start while it runs does nothing).
        func startConnecting() {
            connector.start(name: threadName + ".conn") { [self] in
                while !connector.isStopRequested {
                    housekeeping()
                    let interval = input.isConnected ? Self.linkedPollInterval : Self.connectPollInterval
                    // Real time: paces the looks at the daemon (the retries are timed on `clock`).
                    let next = MonotonicClock.now() + interval
                    MonotonicClock().sleep(until: next, unless: { connector.isStopRequested })
                }
            }
        }

        /// Ends the capture (the clock stopped): the connect thread is joined, then the stream, links
        /// and connection go.
        func shutdown() {
            connector.stop()
            teardown(closeSession: true)
        }

        /// Connects, finds the node, creates and links the stream, notices loss. The connect thread's
        /// (it blocks on the daemon: never on the clock's thread).
        private func housekeeping() {
            if session == nil {
                let now = clock.now()
                guard now >= nextAttempt else { return }
                nextAttempt = now + UInt64(retryInterval * 1e9)
                input.updateStatus { $0.connectAttempts += 1 }
                do {
                    let session = try PipeWireSession(name: "pw.mic", remote: remote)
                    // A daemon that accepts the connection but does not answer is no daemon yet: let go
                    // of it and try again after `retryInterval`.
                    guard session.withLock({ session.roundTrip() }) else {
                        let why = session.withLock { session.lastError }
                        session.close()
                        if !saidMissing {
                            report("PipeWire microphone: the PipeWire daemon at \(PipeWireLibrary.remoteDescription(remote)) does not answer"
                                   + "\(why.map { " (\($0))" } ?? ""); the program audio is silence until it does")
                        }
                        saidMissing = true
                        return
                    }
                    self.session = session
                } catch {
                    if !saidMissing { report("PipeWire microphone: \(error.message); the program audio is silence until it appears") }
                    saidMissing = true
                    return
                }
            }
            guard let session else { return }
            var lostWhy: String?, movedTo: String?
            session.withLock {
                if session.isDisconnected {
                    lostWhy = "the PipeWire daemon went away"
                    return
                }
                if nodeName == nil {
                    defaultSource.follow(session: session)
                    input.updateStatus { $0.defaultNode = defaultSource.name }
                }
                if let current {
                    guard let node = session.globals[current.id], node.properties["object.serial"] == current.serial else {
                        lostWhy = "microphone \(current.name) went away"
                        return
                    }
                    // The default moved to another Audio/Source that exists: follow it.
                    if nodeName == nil, let wanted = defaultSource.name, wanted != current.name,
                       PipeWireMicrophone.choose(Array(session.globals.values), nodeName: wanted) != nil {
                        movedTo = wanted
                        return
                    }
                    if !input.isConnected { link(session: session, source: current.id) }
                    return
                }
                guard let node = PipeWireMicrophone.choose(Array(session.globals.values), nodeName: nodeName, defaultName: defaultSource.name) else {
                    if !saidMissing {
                        report("PipeWire microphone: no Audio/Source\(nodeName.map { " named \($0)" } ?? ""); the program audio is silence until it appears")
                        saidMissing = true
                    }
                    return
                }
                current = (node.id, node.properties["object.serial"], node.properties["node.name"] ?? "node \(node.id)")
                createStream(session: session)
            }
            if let movedTo {
                report("PipeWire microphone: the default microphone is now \(movedTo); moving to it")
                teardown(closeSession: false)
                return
            }
            if let lostWhy {
                report("PipeWire microphone: \(lostWhy); silence until it returns")
                saidMissing = true
                teardown(closeSession: session.withLock { session.isDisconnected })
            }
        }

        /// Must hold the loop lock.
        private func createStream(session: PipeWireSession) {
            guard let core = session.core, current != nil else { return }
            let properties = cpw_properties_new("media.type", "Audio")
            pw_properties_set(properties, "media.category", "Capture")
            pw_properties_set(properties, "media.role", "Production")
            pw_properties_set(properties, "node.name", "studio.mic")
            pw_properties_set(properties, "node.autoconnect", "false")
            pw_properties_set(properties, "node.dont-reconnect", "true")
            // Without a session manager nobody configures the stream's ports: ask for one DSP port per
            // channel (what the links below connect to), the converter turning them into our format.
            pw_properties_set(properties, "adapter.auto-port-config", "{ mode = dsp monitor = false control = false position = preserve }")
            pw_properties_set(properties, "node.latency", "1024/\(format.sampleRate)")
            guard let stream = pw_stream_new(core, "studio microphone", properties) else { return }
            self.stream = stream
            processGate.withLock { $0 = Int(bitPattern: stream) }
            streamCreatedAt = clock.now()
            input.newStream()
            events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
            events.pointee.process = { data in
                Unmanaged<Capture>.fromOpaque(data!).takeUnretainedValue().process()
            }
            events.pointee.state_changed = { data, _, state, error in
                let capture = Unmanaged<Capture>.fromOpaque(data!).takeUnretainedValue()
                let name = String(cString: pw_stream_state_as_string(state)) + (error.map { ": " + String(cString: $0) } ?? "")
                capture.input.updateStatus { $0.streamState = name }
            }
            pw_stream_add_listener(stream, hook, events, Unmanaged.passUnretained(self).toOpaque())
            var bytes = [UInt8](repeating: 0, count: 1024)
            let result = bytes.withUnsafeMutableBytes { raw -> Int32 in
                var builder = cpw_pod_builder(raw.baseAddress, UInt32(raw.count))
                var param: UnsafePointer<spa_pod>? = cpw_build_audio_format(&builder, UInt32(format.sampleRate), UInt32(max(1, format.channels)))
                // RT_PROCESS: each quantum is copied on PipeWire's data thread as it arrives, not handed to
                // the loop thread, which waits for the loop lock the microphone thread takes every 10 ms
                // (on a busy machine that hop lost all but a few quanta a second).
                let flags = pw_stream_flags(PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_DONT_RECONNECT.rawValue
                                            | PW_STREAM_FLAG_RT_PROCESS.rawValue)
                return pw_stream_connect(stream, SPA_DIRECTION_INPUT, UInt32.max, flags, &param, 1)
            }
            if result < 0 { report("PipeWire microphone: pw_stream_connect: \(String(cString: cpw_strerror(result)))") }
        }

        /// Links the source's output ports to the stream's input ports, by channel. Must hold the lock.
        private func link(session: PipeWireSession, source: UInt32) {
            guard let stream else { return }
            let own = pw_stream_get_node_id(stream)
            guard own != SPA_ID_INVALID else { return }
            let outputs = session.ports(ofNode: source, direction: "out").filter { $0.properties["port.monitor"] != "true" }
            if outputs.isEmpty, !configuredPorts, clock.now() - streamCreatedAt > 200_000_000 {
                // A source published through a client's own pw_stream (virtual microphones, filter
                // chains) has no ports until a session manager configures its adapter; without one,
                // configure it here (DSP mode, one port per channel), as WirePlumber would.
                configuredPorts = true
                session.configureDSPOutput(ofNode: source, rate: format.sampleRate)
                return
            }
            let inputs = session.ports(ofNode: own, direction: "in")
            guard !outputs.isEmpty, inputs.count >= max(1, format.channels) else {
                // Ports appear shortly after the stream connects; give up on this node after a while.
                return
            }
            session.roundTrip()
            for input in inputs {
                let channel = input.properties["audio.channel"]
                // Same channel; a mono source feeds every input; otherwise by position.
                let output = outputs.first { $0.properties["audio.channel"] == channel }
                    ?? (outputs.count == 1 ? outputs[0] : outputs[min(inputs.firstIndex(of: input)!, outputs.count - 1)])
                if let proxy = session.createLink(outputNode: source, outputPort: output.id, inputNode: own, inputPort: input.id) {
                    links.append(proxy)
                }
            }
            saidMissing = false
            let name = current?.name
            input.connected(name ?? "?")
            report("PipeWire microphone: capturing \(name ?? "?")")
        }

        /// Destroys the stream and links (and the session when asked); the clock goes on with silence.
        private func teardown(closeSession: Bool) {
            guard let session else { return }
            session.withLock {
                for link in links { pw_proxy_destroy(link) }
                links = []
                if let stream {
                    processGate.withLock { $0 = 0 }
                    spa_hook_remove(hook)
                    pw_stream_disconnect(stream)
                    pw_stream_destroy(stream)
                }
                stream = nil
                current = nil
                configuredPorts = false
            }
            input.disconnected()
            if closeSession {
                session.withLock { defaultSource.drop() }
                input.updateStatus { $0.defaultNode = nil }
                session.close()
                self.session = nil
                nextAttempt = clock.now() + UInt64(retryInterval * 1e9)
            }
        }

        // Callback (PipeWire's data thread, see `Capture`): copy only, into the timed input.
        private func process() {
            processGate.withLock { address in
                guard let stream = OpaquePointer(bitPattern: address) else { return }
                copyQuantum(from: stream)
            }
        }

        private func copyQuantum(from stream: OpaquePointer) {
            guard let pwBuffer = pw_stream_dequeue_buffer(stream) else { return }
            defer { pw_stream_queue_buffer(stream, pwBuffer) }
            quanta.add(1, ordering: .relaxed)
            guard let spaBuffer = pwBuffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let datas = spaBuffer.pointee.datas,
                  let base = datas[0].data, let chunk = datas[0].chunk?.pointee else { return }
            let offset = Int(chunk.offset % max(datas[0].maxsize, 1))
            let bytes = min(Int(chunk.size), Int(datas[0].maxsize) - offset)
            let count = bytes / MemoryLayout<Float>.size
            lastChunk.withLock { $0 = (Int(chunk.size), Int(datas[0].maxsize), Int(chunk.offset), Int(spaBuffer.pointee.n_datas)) }
            guard count > 0 else { return }
            let samples = UnsafeBufferPointer(start: (base + offset).assumingMemoryBound(to: Float.self), count: count)
            input.push(samples, capturedAt: clock.now())
        }
    }
}
