import CPipeWire
import Synchronization
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// The tool's Audio/Sources (48 kHz stereo float):
///
/// - `--node NAME --beep 1 [--beep-offset-ms MS]`: silent except for a 1 kHz beep during the first 100 ms
///   of every whole second of CLOCK_MONOTONIC, shifted by MS (negative: early, as a microphone whose
///   path is shorter than its camera's); its own driver, one DSP port per channel. Like a microphone, a buffer
///   handed over at time T holds the sound of the quantum just before T, so sample j of n is stamped
///   T - (n - j) / rate.
/// - `--mic NAME [--tone HZ] [--ppm P]`: a continuous sine at HZ (default 440, peak 0.25), its own
///   driver whose timer runs P ppm fast (positive) or slow (negative) against CLOCK_MONOTONIC: a
///   microphone with its own crystal (a USB microphone is often 100-300 ppm off).
/// - `--mic-stream NAME [--tone HZ]`: the same sine published the way virtual microphones and filter
///   chains publish theirs: a plain `pw_stream` connected as an OUTPUT with `media.class = Audio/Source`,
///   no port configuration of its own and not a driver (the graph's driver paces it). Its node has no
///   output ports until someone configures them (a session manager does; the microphone must).
///
/// `@unchecked Sendable`: `stream` is set once before the loop starts; `produced` is written and read by
/// `fill` only: on the pacing thread under the loop lock, or (a plain stream, which has no pacing) in the
/// process callback; `pendingSince` is atomic.
final class Beeper: @unchecked Sendable {
    enum Signal {
        /// Beeps starting `offset` nanoseconds after each whole second (negative: before it).
        case beeps(offset: Int64)
        case tone(frequency: Double)
    }
    static let rate = 48_000
    /// Frames per buffer: the node's latency (`node.latency`), the rig's quantum.
    static let quantum = 1024
    let signal: Signal
    /// Published as a plain stream (see the type's doc): filled when the graph asks.
    let plainStream: Bool
    var stream: OpaquePointer?
    var produced: Int64 = 0
    /// When the pacing thread last triggered a cycle whose process has not run yet (0: none pending).
    /// Without it a cycle slower than the pacing's 2 ms tick was triggered twice, and the source sent a
    /// quantum ahead of its clock, then waited it out: a step in what the capture receives that is the
    /// rig's, not a microphone's.
    let pendingSince = Atomic<UInt64>(0)

    /// How long the pacing waits for a triggered cycle's process before it triggers again (ns). Shorter
    /// than any capture's buffer (42 ms at the least), so a lost trigger is a late quantum, not a dry
    /// buffer; longer than a cycle on a loaded machine (10 ms doubled cycles: docs/benchmarks.md).
    static let lostTrigger: UInt64 = 30_000_000
    /// No process this long after a trigger, and no free buffer: the consumer that held them is gone.
    static let abandoned: UInt64 = 500_000_000

    init(signal: Signal, plainStream: Bool) {
        self.signal = signal
        self.plainStream = plainStream
    }

    /// - Parameters:
    ///   - ppm: the driver's clock skew against CLOCK_MONOTONIC (driver only).
    ///   - plainStream: publish as a plain stream (no port config, not a driver), see the type's doc.
    static func run(nodeName: String, signal: Signal, ppm: Double = 0, plainStream: Bool = false) -> Never {
        cpw_init()
        guard let loop = pw_thread_loop_new("pw-beeper", nil),
              let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else { fail("pw_thread_loop_new/pw_context_new failed") }
        guard let core = pw_context_connect(context, nil, 0) else { fail("no PipeWire daemon (pw_context_connect)") }
        let properties = cpw_properties_new("media.class", "Audio/Source")
        pw_properties_set(properties, "media.type", "Audio")
        pw_properties_set(properties, "node.name", nodeName)
        switch signal {
        case .beeps(let offset): pw_properties_set(properties, "node.description", "Beeper (1 kHz, 100 ms on every whole second + \(offset / 1_000_000) ms)")
        case .tone(let frequency): pw_properties_set(properties, "node.description", "Virtual microphone (\(Int(frequency)) Hz, \(ppm) ppm)")
        }
        if !plainStream {
            // One DSP port per channel (FL, FR), so a client can link per channel without a session manager.
            pw_properties_set(properties, "adapter.auto-port-config", "{ mode = dsp monitor = false control = false position = preserve }")
        }
        pw_properties_set(properties, "node.latency", "\(quantum)/\(rate)")
        guard let stream = pw_stream_new(core, nodeName, properties) else { fail("pw_stream_new failed") }
        let beeper = Beeper(signal: signal, plainStream: plainStream)
        beeper.stream = stream
        let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
        hook.initialize(to: spa_hook())
        pw_stream_add_listener(stream, hook, makeEvents(), Unmanaged.passRetained(beeper).toOpaque())
        var bytes = [UInt8](repeating: 0, count: 1024)
        let connected = bytes.withUnsafeMutableBytes { raw -> Int32 in
            var builder = cpw_pod_builder(raw.baseAddress, UInt32(raw.count))
            var param: UnsafePointer<spa_pod>? = cpw_build_audio_format(&builder, UInt32(rate), 2)
            let flags = plainStream ? pw_stream_flags(PW_STREAM_FLAG_MAP_BUFFERS.rawValue)
                : pw_stream_flags(PW_STREAM_FLAG_DRIVER.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue)
            return pw_stream_connect(stream, SPA_DIRECTION_OUTPUT, UInt32.max, flags, &param, 1)
        }
        guard connected >= 0 else { fail("pw_stream_connect: \(String(cString: cpw_strerror(connected)))") }
        guard pw_thread_loop_start(loop) >= 0 else { fail("pw_thread_loop_start failed") }
        say("ready \(nodeName) \(plainStream ? "stream" : "driver") \(ppm) ppm")
        if plainStream {
            while true { MonotonicClock.sleep(seconds: 3600) }
        }
        // Paces the graph: a cycle whenever the samples produced so far are due on this node's own
        // clock, which runs `ppm` fast or slow against CLOCK_MONOTONIC.
        // One cycle at a time: the next is triggered once the last one's process has run (or after
        // `lostTrigger`, should a trigger have been lost: each such wait is said on stderr).
        let origin = MonotonicClock.now(), factor = 1 + ppm / 1e6
        while true {
            MonotonicClock.sleep(seconds: 0.002)
            let now = MonotonicClock.now()
            let due = Int64(Double(now - origin) * factor * Double(rate) / 1e9)
            let pending = beeper.pendingSince.load(ordering: .acquiring)
            if pending != 0, now - pending < Beeper.lostTrigger { continue }
            pw_thread_loop_lock(loop)
            // Said once the source plays (before its first cycle, while it is linked, triggers wait).
            if pending != 0, beeper.produced > 0 {
                say("pw-virtual-camera: \(nodeName): no process \((now - pending) / 1_000_000) ms after a trigger at \(Double(pending - origin) / 1e9) s (driving: \(pw_stream_is_driving(stream)))", to: 2)
            }
            // No free buffer yet (the consumer, late on a loaded machine, still holds the last ones): no
            // cycle either, which would carry nothing; the next pass tries again. After a lost trigger the
            // buffers may never come back: the consumer that held them went away (a studio stopped), and a
            // new one links to a source with none free. The stream is flushed then (`abandoned` after the
            // trigger: a consumer merely late keeps what is queued for it), which returns them.
            if beeper.produced <= due {
                var filled = beeper.fill()
                if !filled, pending != 0, now - pending >= Beeper.abandoned {
                    _ = pw_stream_flush(stream, false)
                    filled = beeper.fill()
                }
                if filled {
                    beeper.pendingSince.store(now, ordering: .releasing)
                    _ = pw_stream_trigger_process(stream)
                }
            }
            pw_thread_loop_unlock(loop)
        }
    }

    /// Fills a free buffer with the next quantum and queues it: on the pacing thread, with the loop
    /// locked, for the cycle it triggers next (1024 frames, the node's latency); a plain stream's in its
    /// process callback (what the graph requests). False when there was no free buffer (the consumer
    /// holds them all) or no memory in it: nothing to carry (such a buffer goes back to the stream
    /// marked empty, so the pool keeps it and no cycle carries stale samples).
    @discardableResult
    func fill() -> Bool {
        guard let stream, let buffer = pw_stream_dequeue_buffer(stream) else { return false }
        defer { pw_stream_queue_buffer(stream, buffer) }
        guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let datas = spaBuffer.pointee.datas else {
            return false
        }
        guard let base = datas[0].data else {
            datas[0].chunk.pointee.size = 0
            return false
        }
        let capacity = Int(datas[0].maxsize) / 8
        let frames = min(capacity, plainStream && buffer.pointee.requested > 0 ? Int(buffer.pointee.requested) : Beeper.quantum)
        let samples = base.assumingMemoryBound(to: Float.self)
        switch signal {
        case .beeps(let offset):
            let now = MonotonicClock.now()
            for j in 0..<frames {
                // The instant this sample stands for, less the offset: a beep starts where it is a whole second.
                let time = Int64(now - UInt64(frames - j) * 1_000_000_000 / UInt64(Beeper.rate)) - offset
                let withinSecond = UInt64(((time % 1_000_000_000) + 1_000_000_000) % 1_000_000_000)
                var value: Float = 0
                if withinSecond < 100_000_000 {
                    value = Float(0.3 * sin(2 * Double.pi * 1000 * Double(withinSecond) / 1e9))
                }
                samples[2 * j] = value
                samples[2 * j + 1] = value
            }
        case .tone(let frequency):
            // The phase from this node's own sample count: a continuous sine on its clock.
            let step = 2 * Double.pi * frequency / Double(Beeper.rate)
            for j in 0..<frames {
                let value = Float(0.25 * sin(step * Double(produced + Int64(j)).truncatingRemainder(dividingBy: 1e12)))
                samples[2 * j] = value
                samples[2 * j + 1] = value
            }
        }
        datas[0].chunk.pointee.offset = 0
        datas[0].chunk.pointee.size = UInt32(frames * 8)
        datas[0].chunk.pointee.stride = 8
        produced += Int64(frames)
        return true
    }

    /// Made in a method, not in top-level code (see `Producer.makeEvents`).
    static func makeEvents() -> UnsafeMutablePointer<pw_stream_events> {
        let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        // A cycle ran: the pacing may trigger the next. The pacing thread fills and queues each buffer
        // before it triggers the cycle that carries it (`fill`): filled here instead, a quantum went out
        // only with the next cycle, a quantum later than its stamps say (as the camera's pictures did, a
        // frame late: docs/benchmarks.md).
        // A plain stream, paced by the graph's driver, fills its buffer when the graph asks, as such
        // streams do.
        events.pointee.process = { data in
            let beeper = Unmanaged<Beeper>.fromOpaque(data!).takeUnretainedValue()
            if beeper.plainStream { beeper.fill() } else { beeper.pendingSince.store(0, ordering: .releasing) }
        }
        return events
    }
}
