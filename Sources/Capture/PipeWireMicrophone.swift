import CPipeWire
import Synchronization
import StudioCore
import StudioSystem

/// The program's audio from a PipeWire Audio/Source (a microphone), on the program's timeline.
///
/// A thread (`cap.mic`) runs the program's `AudioClock`, like `TestToneSource`: every `chunkDuration`
/// it delivers the samples due since the origin, so the timeline never has holes.
/// The samples come from a small jitter buffer that the stream's process callback fills (copy only);
/// whatever the microphone has not supplied (no daemon, no such node, the node went away, a late
/// quantum, the whole process stalled: see `AudioClock`) is silence. A second thread (`cap.mic.conn`, see
/// `Core`) does all that waits on the daemon, so the clock never does: it finds the node (by `nodeName`; without one, the daemon's
/// default: the node named by `default.audio.source` in the "default" metadata a session manager keeps,
/// else the Audio/Source with the highest `priority.session`, then the lowest id), creates the capture
/// stream and links it itself, one link per channel matched by `audio.channel`, so no session manager is
/// needed; when the node goes away it waits for it to come back and picks it up again. Following the
/// default, it moves to the new node when the metadata names another existing Audio/Source (the
/// timeline goes on; the switch costs a jitter buffer of silence).
///
/// The stream asks for interleaved F32 at `format` (48 kHz stereo); the stream's own converter (the
/// adapter's audioconvert, in dsp port mode) resamples and remixes whatever the source delivers. The
/// source's clock is not the program's: the buffer is read through an `AdaptiveResampler` whose step a
/// `ClockRatioEstimator` sets from the buffer's fill, so a source some hundred ppm fast or slow keeps a
/// fixed delay; discarding and inserting are the last resort, counted (`Status`). A source published
/// through a client's own stream has no ports until its adapter is configured: the microphone sets its
/// PortConfig itself when no session manager did (see docs/pipewire.md).
public final class PipeWireMicrophone: AudioInput {
    public let nodeName: String?
    public let format: AudioFormat
    public let remote: String?
    public let chunkDuration: Double
    private let core: Core

    public struct Status: Sendable, Hashable {
        /// The node captured now (node.name), nil while there is none.
        public var node: String?
        /// Samples per channel delivered on the timeline since `start`.
        public var framesDelivered: Int64 = 0
        /// Of those, samples that came from the microphone (the rest was silence).
        public var framesCaptured: Int64 = 0
        /// Last resort, counted apart from the resampling: samples per channel the stream delivered that
        /// were thrown away, at a jump (the buffer beyond its target by more than
        /// `AudioCapture.jumpThreshold`: a burst, a backlog) or because the ring (1 s) was full.
        public var framesDiscarded: Int64 = 0
        /// Times the microphone was found and linked.
        public var connections: Int = 0
        /// Times a connection to the daemon was tried (by the connect thread, every `retryInterval`
        /// while there is none), successful or not.
        public var connectAttempts: Int = 0
        /// Index of the next sample on the program's audio timeline.
        public var nextSample: Int64 = 0
        /// The capture stream's state (PipeWire's name for it), "none" without a stream.
        public var streamState: String = "none"
        /// Jitter-buffer delay in samples (what the clock keeps queued before it plays captured audio).
        public var bufferTarget: Int = 0
        /// Without a node name: the node the daemon's `default.audio.source` metadata names, nil when
        /// there is none (or no "default" metadata: no session manager).
        public var defaultNode: String?
        /// The input's clock against the program's (CLOCK_MONOTONIC), measured: positive runs fast.
        public var estimatedPPM: Double = 0
        /// The input's clock ratio measured independently, from when its samples arrive (`ArrivalClock`,
        /// after 15 s; nil before): a diagnostic, not fed to the resampling (see docs/pipewire.md).
        public var arrivalPPM: Double?
        /// The resampling correction applied to the last block (the estimate plus what pulls the
        /// buffer back to its target), in ppm.
        public var compensationPPM: Double = 0
        /// Last resort, counted apart from the resampling: samples per channel of silence inserted
        /// because the buffer ran dry while the source was linked (a stall, a late source), until it
        /// plays again. Silence while the source is gone is not counted here.
        public var framesInserted: Int64 = 0
        /// Samples per channel dropped once after each start to bring the buffer to its target (a start
        /// lands anywhere within a quantum); not a last resort.
        public var framesAligned: Int64 = 0
        /// Times the buffer ran dry while playing (each one a run of `framesInserted`); each raises
        /// `bufferTarget` by a quantum (up to 125 ms), which comes off again after a calm stretch
        /// (`UnderrunHeadroom`).
        public var underruns: Int = 0
        /// The buffer's level in samples per channel: input frames queued once a block is taken, as an
        /// on-time source gives them, smoothed (see `ClockRatioEstimator`), held at `bufferTarget` by the
        /// resampling.
        public var bufferFill: Double = 0
        /// Seconds a sample waits now between its arrival and the clock taking it: the level plus the
        /// resampler's half filter (0 while not playing).
        public var bufferSeconds: Double = 0
        /// "playing" (captured audio in the blocks), "buffering" (linked, filling the jitter buffer),
        /// "lost" (no node or no daemon: silence).
        public var state: String = "lost"
        /// The delay this input adds on the program timeline, fixed once the quantum is known: the
        /// buffer's target plus the resampler's half filter, in seconds.
        public var bufferDelay: Double = 0
    }

    /// - Parameters:
    ///   - nodeName: the Audio/Source's node.name; nil for the default (see the type's doc).
    ///   - report: one line for the operator's log when the microphone or daemon is missing, found or lost.
    ///   - clock: the clock of its audio pump and retries (tests pass a `ManualClock`).
    ///   - deliver: called on the microphone's thread with each chunk; must not block.
    public init(nodeName: String? = nil, format: AudioFormat = .program, remote: String? = nil, chunkDuration: Double = 0.01,
                retryInterval: Double = 2, threadName: String = "cap.mic", clock: any Clock = .monotonic,
                report: @escaping @Sendable (String) -> Void = { _ in }, deliver: @escaping @Sendable (AudioChunk) -> Void) {
        self.nodeName = nodeName
        self.format = format
        self.remote = remote
        self.chunkDuration = min(max(chunkDuration, 0.002), 0.1)
        core = Core(nodeName: nodeName, format: format, remote: remote,
                    audioClock: AudioClock(format: format, interval: UInt64(self.chunkDuration * 1e9), clock: clock),
                    retryInterval: max(0.1, retryInterval), threadName: threadName, report: report, deliver: deliver)
    }

    deinit { core.worker.requestStop() }

    /// Starts the clock: sample 0 is due at `origin` (default now), as with `TestToneSource.start`.
    public func start(origin: UInt64? = nil) { core.start(origin: origin ?? core.clock.now()) }
    public func stop() { core.stop() }
    public var status: Status { core.status.withLock { $0 } }
    /// Buffers received and the layout of the last one, for test messages.
    public var diagnostics: String {
        let quanta = core.buffer.withLock { $0.quanta }, last = core.lastChunk.withLock { $0 }
        return "quanta \(quanta), last chunk size \(last.0) maxsize \(last.1) offset \(last.2) datas \(last.3)"
    }

    /// Picks the node to capture among the registry's nodes: the one named `nodeName`, or (nil) the one
    /// named `defaultName` (the metadata's default.audio.source) if it is an Audio/Source, else the
    /// Audio/Source with the highest priority.session, then the lowest id.
    static func choose(_ nodes: [PipeWireGlobal], nodeName: String?, defaultName: String? = nil) -> PipeWireGlobal? {
        let sources = nodes.filter { $0.isNode && $0.mediaClass == "Audio/Source" }
        if let nodeName { return sources.first { $0.properties["node.name"] == nodeName } }
        if let defaultName, let node = sources.first(where: { $0.properties["node.name"] == defaultName }) { return node }
        return sources.max { a, b in
            let pa = Int(a.properties["priority.session"] ?? "") ?? 0, pb = Int(b.properties["priority.session"] ?? "") ?? 0
            return pa != pb ? pa < pb : a.id > b.id
        }
    }
}

extension PipeWireMicrophone {
    struct Buffer: Sendable {
        var ring: AudioRing
        /// Largest quantum the stream delivered, in frames.
        var largestQuantum = 0
        var discarded: Int64 = 0
        /// When the samples arrive (the source's clock against CLOCK_MONOTONIC).
        var arrivals = ArrivalClock()
        /// Added to the target after underruns, and taken off again after a calm stretch (see `fill`).
        var headroom: UnderrunHeadroom
        /// Frames dropped to align the buffer with its target after each start (not a last resort).
        var aligned: Int64 = 0
        /// Buffers the stream delivered (with and without samples).
        var quanta: Int64 = 0
        /// Bumps each time the connect thread creates a stream: the clock thread then starts its clock
        /// estimate over (a new stream, maybe a new source).
        var streamGeneration: UInt64 = 0
        /// When the last samples came in (on the microphone's clock; 0 before any), and how many frames.
        var lastArrival: UInt64 = 0
        var lastQuantum = 0
    }

    /// Two threads of ours touch a capture, and never the same mutable state:
    /// - the connect thread (`connector`, named after the clock's thread plus `.conn`, started by `begin`
    ///   and joined by `shutdown`) does everything that waits on the daemon: it connects, finds the node,
    ///   creates and links the stream, notices loss and tears a dead session down (`housekeeping`).
    ///   Those calls block (round trips of up to 2 s, a daemon that does not answer, a loaded machine),
    ///   so they never run on the clock's thread, which an `AudioInputSet` shares among all its inputs.
    /// - the clock's thread (`fill`, `stalled`, `begin`) only reads the jitter buffer: it never waits
    ///   on PipeWire.
    ///
    /// `@unchecked Sendable`: `session`, `stream`, `links`, hooks, `current`, `defaultSource`, `nextAttempt`,
    /// `saidMissing`, `configuredPorts` and `streamCreatedAt` are touched only by the connect thread
    /// (holding the loop lock for every PipeWire call) and by the stream's callbacks on the loop thread
    /// (which hold that lock), except `process`, which runs on PipeWire's data thread
    /// (`PW_STREAM_FLAG_RT_PROCESS`) and reaches the stream only through `processGate`, which teardown
    /// empties before it disconnects the stream (so no `process` runs past that point). What the two
    /// threads share crosses in `buffer` (the samples, and `streamGeneration`: a new stream), `linked`
    /// (atomic) and `status` (the counters). `loop`, `resampler`, `origin`, `streamSeen`,
    /// `arrivalRatio`, `sinceArrivalCheck` and `silentSinceUnderrun` belong to the clock's
    /// thread alone. After `shutdown` has joined the connect thread, the clock's thread (its loop over)
    /// tears the rest down.
    final class Core: @unchecked Sendable {
        let nodeName: String?
        let format: AudioFormat
        let remote: String?
        let audioClock: AudioClock
        var clock: any Clock { audioClock.clock }
        /// Frames in the clock's block (the jitter buffer's target allows for it).
        var blockFrames: Int { Int(Double(audioClock.interval) * Double(format.sampleRate) / 1e9) }
        let retryInterval: Double
        let threadName: String
        let report: @Sendable (String) -> Void
        let deliver: @Sendable (AudioChunk) -> Void
        let worker = WorkerThread()
        /// The connect thread (see the type's doc).
        let connector = WorkerThread()
        let status = Mutex(Status())
        let buffer: Mutex<Buffer>
        let lastChunk = Mutex((0, 0, 0, 0))

        private var session: PipeWireSession?
        private var stream: OpaquePointer?
        /// The stream's address as `process` (on PipeWire's data thread) sees it: 0 once teardown began.
        /// Held for the whole callback, so teardown taking it waits for a callback in flight.
        private let processGate = Mutex<Int>(0)
        private var links: [OpaquePointer] = []
        /// The node captured (id and serial), once linked or while linking.
        private var current: (id: UInt32, serial: String?, name: String)?
        /// Whether the stream is linked to the source (written by the connect thread, read by the clock's).
        let linked = Atomic<Bool>(false)
        private var streamCreatedAt: UInt64 = 0
        private let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
        private let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
        private var nextAttempt: UInt64 = 0
        /// The clock thread's: what it decides per block (whether captured audio plays, the last
        /// resort, the clock estimate), the resampler, and whether the silence now follows an underrun.
        var loop = JitterBufferLoop()
        var resampler: AdaptiveResampler
        /// The `Buffer.streamGeneration` the clock's loop was started for.
        var streamSeen: UInt64 = 0
        var sinceArrivalCheck = 0
        /// When the clock's sample 0 is due (on `clock`), from `begin`.
        var origin: UInt64 = 0
        /// The source's clock ratio from its arrivals (`ArrivalClock`), a diagnostic.
        var arrivalRatio: Double?
        var silentSinceUnderrun = false
        /// Whether this node's ports were configured by us (a stream-published source has none before).
        private var configuredPorts = false
        private var saidMissing = false
        /// default.audio.source (followed only without `nodeName`).
        private let defaultSource = PipeWireDefaultSource()

        init(nodeName: String?, format: AudioFormat, remote: String?, audioClock: AudioClock, retryInterval: Double, threadName: String,
             report: @escaping @Sendable (String) -> Void, deliver: @escaping @Sendable (AudioChunk) -> Void) {
            self.nodeName = nodeName
            self.format = format
            self.remote = remote
            self.audioClock = audioClock
            self.retryInterval = retryInterval
            self.threadName = threadName
            self.report = report
            self.deliver = deliver
            buffer = Mutex(Buffer(ring: AudioRing(frames: format.sampleRate, channels: max(1, format.channels)),
                                  headroom: UnderrunHeadroom(rate: format.sampleRate)))
            resampler = AdaptiveResampler(channels: format.channels)
            hook.initialize(to: spa_hook())
            events.initialize(to: pw_stream_events())
        }

        deinit {
            hook.deallocate()
            events.deallocate()
        }

        func start(origin: UInt64) {
            worker.start(name: threadName) { [self] in run(origin: origin) }
        }

        func stop() { worker.stop() }

        private func run(origin: UInt64) {
            audioClock.run(origin: origin, stop: { worker.isStopRequested }, begin: { begin(first: $0, origin: origin) }, fill: fill,
                           stalled: stalled, deliver: deliver)
            shutdown()
        }

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
                    let interval = linked.load(ordering: .relaxed) ? Self.linkedPollInterval : Self.connectPollInterval
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
                status.withLock { $0.connectAttempts += 1 }
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
                    status.withLock { $0.defaultNode = defaultSource.name }
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
                    if !linked.load(ordering: .sequentiallyConsistent) { link(session: session, source: current.id) }
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
            linked.store(false, ordering: .sequentiallyConsistent)
            streamCreatedAt = clock.now()
            buffer.withLock {
                $0.streamGeneration &+= 1
                $0.ring.removeAll()
                $0.largestQuantum = 0
                $0.headroom = UnderrunHeadroom(rate: format.sampleRate)
                $0.arrivals = ArrivalClock()
            }
            events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
            events.pointee.process = { data in
                Unmanaged<Core>.fromOpaque(data!).takeUnretainedValue().process()
            }
            events.pointee.state_changed = { data, _, state, error in
                let core = Unmanaged<Core>.fromOpaque(data!).takeUnretainedValue()
                let name = String(cString: pw_stream_state_as_string(state)) + (error.map { ": " + String(cString: $0) } ?? "")
                core.status.withLock { $0.streamState = name }
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
            linked.store(true, ordering: .sequentiallyConsistent)
            saidMissing = false
            let name = current?.name
            status.withLock {
                $0.node = name
                $0.connections += 1
            }
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
                linked.store(false, ordering: .sequentiallyConsistent)
                configuredPorts = false
            }
            status.withLock {
                $0.node = nil
                $0.streamState = "none"
            }
            if closeSession {
                session.withLock { defaultSource.drop() }
                status.withLock { $0.defaultNode = nil }
                session.close()
                self.session = nil
                nextAttempt = clock.now() + UInt64(retryInterval * 1e9)
            }
        }

        // Callback (PipeWire's data thread, see `Core`): copy only.
        private func process() {
            processGate.withLock { address in
                guard let stream = OpaquePointer(bitPattern: address) else { return }
                copyQuantum(from: stream)
            }
        }

        private func copyQuantum(from stream: OpaquePointer) {
            guard let pwBuffer = pw_stream_dequeue_buffer(stream) else { return }
            defer { pw_stream_queue_buffer(stream, pwBuffer) }
            buffer.withLock { $0.quanta += 1 }
            guard let spaBuffer = pwBuffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let datas = spaBuffer.pointee.datas,
                  let base = datas[0].data, let chunk = datas[0].chunk?.pointee else { return }
            let offset = Int(chunk.offset % max(datas[0].maxsize, 1))
            let bytes = min(Int(chunk.size), Int(datas[0].maxsize) - offset)
            let count = bytes / MemoryLayout<Float>.size
            lastChunk.withLock { $0 = (Int(chunk.size), Int(datas[0].maxsize), Int(chunk.offset), Int(spaBuffer.pointee.n_datas)) }
            guard count > 0 else { return }
            let samples = UnsafeBufferPointer(start: (base + offset).assumingMemoryBound(to: Float.self), count: count)
            let now = clock.now(), arrival = Double(now) / 1e9, frames = count / max(1, format.channels), rate = Double(format.sampleRate)
            buffer.withLock {
                $0.lastArrival = now
                $0.lastQuantum = frames
                $0.arrivals.arrived(frames: frames, at: arrival, rate: rate)
                let dropped = $0.ring.write(samples)
                $0.discarded += Int64(dropped)
                $0.largestQuantum = max($0.largestQuantum, count / max(1, format.channels))
            }
        }
    }
}
