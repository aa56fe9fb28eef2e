import CPipeWire
import Synchronization
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// `--beep`: an Audio/Source (48 kHz stereo float, its own driver) that is silent except for a 1 kHz beep
/// during the first 100 ms of every whole second of CLOCK_MONOTONIC. Like a microphone, a buffer handed
/// over at time T holds the sound of the quantum just before T, so sample j of n is stamped
/// T - (n - j) / rate.
///
/// `@unchecked Sendable`: `stream` is set once before the loop starts; `produced` is written by the
/// process callback (loop thread, loop lock held) and read by the pacing thread under the loop lock.
final class Beeper: @unchecked Sendable {
    static let rate = 48_000
    var stream: OpaquePointer?
    var produced: Int64 = 0

    static func run(nodeName: String) -> Never {
        cpw_init()
        guard let loop = pw_thread_loop_new("pw-beeper", nil),
              let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else { fail("pw_thread_loop_new/pw_context_new failed") }
        guard let core = pw_context_connect(context, nil, 0) else { fail("no PipeWire daemon (pw_context_connect)") }
        let properties = cpw_properties_new("media.class", "Audio/Source")
        pw_properties_set(properties, "media.type", "Audio")
        pw_properties_set(properties, "node.name", nodeName)
        pw_properties_set(properties, "node.description", "Beeper (1 kHz, 100 ms on every whole second)")
        // One DSP port per channel (FL, FR), so a client can link per channel without a session manager.
        pw_properties_set(properties, "adapter.auto-port-config", "{ mode = dsp monitor = false control = false position = preserve }")
        pw_properties_set(properties, "node.latency", "1024/48000")
        guard let stream = pw_stream_new(core, nodeName, properties) else { fail("pw_stream_new failed") }
        let beeper = Beeper()
        beeper.stream = stream
        let hook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
        hook.initialize(to: spa_hook())
        pw_stream_add_listener(stream, hook, makeEvents(), Unmanaged.passRetained(beeper).toOpaque())
        var bytes = [UInt8](repeating: 0, count: 1024)
        let connected = bytes.withUnsafeMutableBytes { raw -> Int32 in
            var builder = cpw_pod_builder(raw.baseAddress, UInt32(raw.count))
            var param: UnsafePointer<spa_pod>? = cpw_build_audio_format(&builder, UInt32(rate), 2)
            let flags = pw_stream_flags(PW_STREAM_FLAG_DRIVER.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue)
            return pw_stream_connect(stream, SPA_DIRECTION_OUTPUT, UInt32.max, flags, &param, 1)
        }
        guard connected >= 0 else { fail("pw_stream_connect: \(String(cString: cpw_strerror(connected)))") }
        guard pw_thread_loop_start(loop) >= 0 else { fail("pw_thread_loop_start failed") }
        say("ready \(nodeName) beeper")
        // Paces the graph: a cycle whenever the samples produced so far are due.
        let samples = FrameGrid(origin: MonotonicClock.now(), rate: Rational(Int32(rate)))
        while true {
            MonotonicClock.sleep(seconds: 0.002)
            let due = samples.frame(at: MonotonicClock.now())
            pw_thread_loop_lock(loop)
            if beeper.produced <= due { _ = pw_stream_trigger_process(stream) }
            pw_thread_loop_unlock(loop)
        }
    }

    /// Made in a method, not in top-level code (see `Producer.makeEvents`).
    static func makeEvents() -> UnsafeMutablePointer<pw_stream_events> {
        let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.process = { data in
            let beeper = Unmanaged<Beeper>.fromOpaque(data!).takeUnretainedValue()
            guard let stream = beeper.stream, let buffer = pw_stream_dequeue_buffer(stream) else { return }
            defer { pw_stream_queue_buffer(stream, buffer) }
            guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0, let datas = spaBuffer.pointee.datas,
                  let base = datas[0].data else { return }
            let capacity = Int(datas[0].maxsize) / 8
            let frames = min(capacity, buffer.pointee.requested > 0 ? Int(buffer.pointee.requested) : 480)
            let now = MonotonicClock.now()
            let samples = base.assumingMemoryBound(to: Float.self)
            for j in 0..<frames {
                let time = now - UInt64(frames - j) * 1_000_000_000 / UInt64(Beeper.rate)
                let withinSecond = time % 1_000_000_000
                var value: Float = 0
                if withinSecond < 100_000_000 {
                    value = Float(0.3 * sin(2 * Double.pi * 1000 * Double(withinSecond) / 1e9))
                }
                samples[2 * j] = value
                samples[2 * j + 1] = value
            }
            datas[0].chunk.pointee.offset = 0
            datas[0].chunk.pointee.size = UInt32(frames * 8)
            datas[0].chunk.pointee.stride = 8
            beeper.produced += Int64(frames)
        }
        return events
    }
}
