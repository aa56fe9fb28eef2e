import Foundation
import Testing
import Synchronization
import Capture
import StudioCore
import StudioSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Collects an `AudioInputSet`'s spans.
final class SpanLog: Sendable {
    let spans = Mutex<[AudioInputBlocks]>([])
    var deliver: @Sendable (AudioInputBlocks) -> Void { { [self] span in spans.withLock { $0.append(span) } } }

    /// Input `index`'s left channel over the spans `from` ..< end.
    func left(_ index: Int, from start: Int = 0) -> [Float] {
        spans.withLock { spans in
            spans[min(start, spans.count)...].flatMap { span in stride(from: 0, to: span.blocks[index].samples.count, by: 2).map { span.blocks[index].samples[$0] } }
        }
    }
    var count: Int { spans.withLock { $0.count } }
}

/// The level of `frequency` in `samples`: Goertzel over 0.1 s windows, averaged (a window that short
/// is blind to the resampling's fraction of a hertz, which a longer one would count as a lower level).
func toneLevel(_ samples: [Float], _ frequency: Double) -> Double {
    let windows = toneLevels(samples, frequency)
    return windows.isEmpty ? 0 : windows.reduce(0, +) / Double(windows.count)
}

/// The tone's level in each 100 ms window (mono samples at 48 kHz).
func toneLevels(_ samples: [Float], _ frequency: Double) -> [Double] {
    stride(from: 0, to: samples.count - 4_799, by: 4_800).map { AudioSignals.goertzelAmplitude(samples[$0..<($0 + 4_800)], frequency: frequency) }
}

/// A microphone input of a set, its log lines prefixed as `ProgramAudio` prefixes them
/// (`audio input N (pipewire:NODE): ...`).
func microphone(_ node: String, number: Int, remote: String?, retryInterval: Double = 0.2, chunkDuration: Double = AudioInputSet.standardChunkDuration,
                report: @escaping @Sendable (String) -> Void = { _ in }) -> any ClockedAudioInput {
    PipeWireMicrophone.input(node: node, remote: remote, chunkDuration: chunkDuration, retryInterval: retryInterval,
                             report: { report("audio input \(number) (\(PipeWireMicrophone.label(node))): \($0)") })
}

extension PipeWireDaemonTests {
/// Audio inputs against a real private PipeWire daemon and virtual microphones (`pw-virtual-camera --mic`).
@Suite(.serialized) struct AudioInputRigTests {
    let rig: PipeWireRig

    init() throws {
        rig = try PipeWireRig()
        try rig.start()
    }

    /// The issue's bug: an Audio/Source published through a client's own `pw_stream` (as virtual
    /// microphones and filter chains publish theirs) has no ports until someone configures its adapter;
    /// the microphone stayed on silence ("node -", nothing captured). It configures it itself now.
    @Test func aStreamPublishedAudioSourceIsCaptured() throws {
        try rig.startMicrophone(node: "vstream", tone: 440, plainStream: true)
        let chunks = Mutex<[AudioChunk]>([])
        let mic = PipeWireMicrophone(nodeName: "vstream", remote: rig.remote) { chunk in chunks.withLock { $0.append(chunk) } }
        mic.start(origin: MonotonicClock.now())
        #expect(waitUntil(seconds: 10) { mic.status.framesCaptured > 24_000 }, "\(mic.status); \(mic.diagnostics)")
        mic.stop()
        #expect(mic.status.connections == 1)
        let samples = chunks.withLock { $0 }.flatMap(\.samples)
        let tone = ToneAnalysis(samples: stride(from: 0, to: samples.count, by: 2).map { samples[$0] })
        #expect(tone.level > 0.05 && abs(tone.frequency - 440) < 25, "level \(tone.level), \(tone.frequency) Hz")
    }

    /// Two microphones (440 Hz, its own driver; 1 kHz, a plain stream), the test tone and silence, at
    /// once: every span has one block per input for the same samples, each input holds its own tone.
    /// Then one microphone vanishes: silence in its block only, the other goes on; it comes back by itself.
    @Test func severalInputsAtOnceEachWithItsToneAndOneLostAndBack() throws {
        try rig.startMicrophone(node: "mic-a", tone: 440)
        try rig.startMicrophone(node: "mic-b", tone: 1000, plainStream: true)
        let log = SpanLog(), messages = Mutex<[String]>([])
        let report: @Sendable (String) -> Void = { line in messages.withLock { $0.append(line) } }
        let inputs = AudioInputSet(inputs: [microphone("mic-a", number: 1, remote: rig.remote, report: report),
                                            microphone("mic-b", number: 2, remote: rig.remote, report: report),
                                            ToneInput(.tone(frequency: 3000, level: -20)), ToneInput.silence],
                                   deliver: log.deliver)
        inputs.start()
        defer { inputs.stop() }
        #expect(waitUntil(seconds: 10) { inputs.status.prefix(2).allSatisfy { $0.state == "playing" && $0.framesCaptured > 48_000 } },
                "\(inputs.status)")
        let measuredFrom = log.count
        #expect(waitUntil(seconds: 10) { log.count > measuredFrom + 50 })
        func levels(_ index: Int, from start: Int) -> (a: Double, b: Double, tone: Double) {
            let samples = log.left(index, from: start)
            return (toneLevel(samples, 440), toneLevel(samples, 1000), toneLevel(samples, 3000))
        }
        let a = levels(0, from: measuredFrom), b = levels(1, from: measuredFrom), tone = levels(2, from: measuredFrom)
        #expect(a.a > 0.2 && a.b < 0.01 && a.tone < 0.01, "mic-a: \(a)")
        #expect(b.b > 0.2 && b.a < 0.01 && b.tone < 0.01, "mic-b: \(b) \(inputs.status[1])")
        #expect(tone.tone > 0.09 && tone.a < 0.01, "tone: \(tone)")
        #expect(log.left(3, from: measuredFrom).allSatisfy { $0 == 0 })
        // One span, one block per input, all for the same samples; the spans follow one another.
        log.spans.withLock { spans in
            var next = spans.first?.firstSample ?? 0
            for span in spans {
                #expect(span.blocks.count == 4 && span.firstSample == next)
                #expect(span.blocks.allSatisfy { $0.firstSample == span.firstSample && $0.frameCount == span.frameCount })
                next += Int64(span.frameCount)
            }
        }

        // mic-b goes away: its block is silence, mic-a's goes on.
        rig.stopCamera(node: "mic-b")
        #expect(waitUntil(seconds: 15) { inputs.status[1].state == "lost" }, "\(inputs.status[1])")
        let lostFrom = log.count
        #expect(waitUntil(seconds: 10) { log.count > lostFrom + 100 })
        #expect(log.left(1, from: lostFrom).allSatisfy { $0 == 0 }, "a lost input is silence")
        // The other input goes on: its tone in most 100 ms windows (a loaded machine may starve its
        // source for one, as it may anywhere: counted in its status, which the message shows).
        let goesOn = toneLevels(log.left(0, from: lostFrom), 440)
        #expect(goesOn.count >= 4 && goesOn.sorted()[goesOn.count / 2] > 0.2 && goesOn.filter { $0 > 0.2 }.count * 4 >= goesOn.count * 3,
                "the other input goes on: \(goesOn); \(inputs.status[0])")
        #expect(inputs.status[0].state == "playing")
        // And back, by itself.
        let captured = inputs.status[1].framesCaptured
        try rig.startMicrophone(node: "mic-b", tone: 1000, plainStream: true)
        #expect(waitUntil(seconds: 10) { inputs.status[1].state == "playing" && inputs.status[1].framesCaptured > captured + 9_600 },
                "\(inputs.status[1])")
        #expect(inputs.status[1].connections == 2)
        let backFrom = log.count
        #expect(waitUntil(seconds: 10) { log.count > backFrom + 50 })
        #expect(toneLevel(log.left(1, from: backFrom), 1000) > 0.2)
        #expect(messages.withLock { $0 }.contains { $0.contains("audio input 2") && $0.contains("went away") }, "\(messages.withLock { $0 })")
    }

    /// Issue 13's bug: a lost input's reconnect work (a session, round trips to the daemon) ran on the
    /// set's one clock thread, so a daemon slow to answer held every input's blocks back. Here the daemon
    /// is stopped (SIGSTOP: it accepts connections and answers nothing, each attempt waits out its 2 s
    /// round trip): the set's spans keep coming every block all along, the tone input's too, while the
    /// PipeWire input tries again and again; once the daemon goes on, the input is captured.
    @Test func aDaemonThatDoesNotAnswerNeverHoldsTheClockBack() throws {
        let pid = try #require(rig.daemonPID)
        try rig.startMicrophone(node: "mic-a", tone: 440)
        #expect(kill(pid, SIGSTOP) == 0)
        var resumed = false
        defer { if !resumed { kill(pid, SIGCONT) } }
        // When each span arrived (real time), kept by the set's thread.
        let arrivals = Mutex<[UInt64]>([]), log = SpanLog(), messages = Mutex<[String]>([])
        let inputs = AudioInputSet(inputs: [ToneInput(.tone(frequency: 3000, level: -20)),
                                            microphone("mic-a", number: 2, remote: rig.remote, report: { line in messages.withLock { $0.append(line) } })]) { span in
            arrivals.withLock { $0.append(MonotonicClock.now()) }
            log.deliver(span)
        }
        inputs.start()
        defer { inputs.stop() }
        // Three attempts: the first two have each waited out their round trip (2 s) by the time the third begins.
        #expect(waitUntil(seconds: 30) { inputs.status[1].connectAttempts >= 3 }, "\(inputs.status[1])")
        let times = arrivals.withLock { $0 }
        let gaps = zip(times.dropFirst(), times).map { Double($0 - $1) / 1e9 }
        // A span every block (more than 3 s of them); a busy 2-core machine may hold the thread back a
        // little, never a round trip's 2 s.
        #expect(Double(times.count) * inputs.chunkDuration > 3 && (gaps.max() ?? 0) < 1, "\(times.count) spans, largest gap \(gaps.max() ?? 0) s")
        #expect(toneLevel(log.left(0), 3000) > 0.09 && log.left(1).allSatisfy { $0 == 0 })
        #expect(inputs.status[1].state == "lost" && inputs.status[1].connections == 0, "\(inputs.status[1])")
        #expect(messages.withLock { $0 }.contains { $0.contains("does not answer") }, "\(messages.withLock { $0 })")
        // The daemon goes on: the input connects by itself and plays mic-a's tone.
        #expect(kill(pid, SIGCONT) == 0)
        resumed = true
        #expect(waitUntil(seconds: 15) { inputs.status[1].state == "playing" && inputs.status[1].framesCaptured > 24_000 }, "\(inputs.status[1])")
        // Its own tone in its block, over half a second of spans, within 15 s (the level to the dB is the
        // other tests' subject: on a machine busy enough the new jitter buffer may still be refilling
        // through underruns; in CI, beside four end-to-end tests, the first half second was one such).
        var levels: [(own: Double, other: Double)] = []
        let heard = waitUntil(seconds: 15) {
            let from = log.count
            guard waitUntil(seconds: 10, { log.count > from + 50 }) else { return false }
            levels.append((toneLevel(log.left(1, from: from), 440), toneLevel(log.left(1, from: from), 3000)))
            return levels.last!.own > 0.1
        }
        #expect(heard && levels.allSatisfy { $0.other < 0.01 }, "440 Hz and 3 kHz in its block, by half seconds: \(levels)")
    }

    /// The daemon dies (SIGKILL, by its PID) and comes back with its microphones: every span keeps
    /// coming meanwhile (silence in both inputs' blocks, the tone's goes on), each input is lost, then
    /// captured again by itself, its own tone in its own block.
    @Test func bothInputsComeBackAfterTheDaemonDiesAndRestarts() throws {
        try rig.startMicrophone(node: "mic-a", tone: 440)
        try rig.startMicrophone(node: "mic-b", tone: 1000, plainStream: true)
        let log = SpanLog()
        let inputs = AudioInputSet(inputs: [microphone("mic-a", number: 1, remote: rig.remote), microphone("mic-b", number: 2, remote: rig.remote),
                                            ToneInput(.tone(frequency: 3000, level: -20))], deliver: log.deliver)
        inputs.start()
        defer { inputs.stop() }
        #expect(waitUntil(seconds: 15) { inputs.status.prefix(2).allSatisfy { $0.state == "playing" } }, "\(inputs.status)")
        rig.killDaemon()
        #expect(waitUntil(seconds: 15) { inputs.status.prefix(2).allSatisfy { $0.state == "lost" && $0.node == nil } }, "\(inputs.status)")
        let goneFrom = log.count
        #expect(waitUntil(seconds: 10) { log.count > goneFrom + 50 })
        #expect(log.left(0, from: goneFrom).allSatisfy { $0 == 0 } && log.left(1, from: goneFrom).allSatisfy { $0 == 0 })
        #expect(toneLevel(log.left(2, from: goneFrom), 3000) > 0.09, "the tone goes on")
        try rig.start()
        try rig.startMicrophone(node: "mic-a", tone: 440)
        try rig.startMicrophone(node: "mic-b", tone: 1000, plainStream: true)
        let captured = inputs.status.prefix(2).map(\.framesCaptured)
        #expect(waitUntil(seconds: 20) {
            let status = inputs.status
            return (0..<2).allSatisfy { status[$0].state == "playing" && status[$0].framesCaptured > captured[$0] + 24_000 && status[$0].connections == 2 }
        }, "\(inputs.status)")
        let backFrom = log.count
        #expect(waitUntil(seconds: 10) { log.count > backFrom + 50 })
        #expect(toneLevel(log.left(0, from: backFrom), 440) > 0.2 && toneLevel(log.left(1, from: backFrom), 1000) > 0.2, "\(inputs.status)")
        // No span missing, none twice.
        log.spans.withLock { spans in
            var next = spans.first?.firstSample ?? 0
            for span in spans {
                #expect(span.firstSample == next)
                next += Int64(span.frameCount)
            }
        }
    }

    /// Inputs added while the set runs (a microphone plugged in mid-show): each has a block in every span
    /// from the next one on, holding its own signal, and the inputs already there go on unchanged.
    @Test func inputsAddedWhileRunningJoinTheNextSpan() throws {
        try rig.startMicrophone(node: "late-mic", tone: 1000)
        let log = SpanLog()
        let inputs = AudioInputSet(inputs: [ToneInput(.tone(frequency: 440, level: -20))], deliver: log.deliver)
        inputs.start()
        defer { inputs.stop() }
        #expect(waitUntil(seconds: 15) { log.count > 20 })
        #expect(inputs.add(ToneInput(.tone(frequency: 3000, level: -20))) == 1)
        #expect(inputs.add(microphone("late-mic", number: 3, remote: rig.remote)) == 2)
        #expect(inputs.inputs.map(\.description) == ["tone", "tone", "pipewire:late-mic"])
        #expect(waitUntil(seconds: 10) { inputs.status.count == 3 && inputs.status[2].state == "playing" && inputs.status[2].framesCaptured > 24_000 },
                "\(inputs.status)")
        let from = log.count
        #expect(waitUntil(seconds: 10) { log.count > from + 50 })
        #expect(toneLevel(log.left(0, from: from), 440) > 0.09 && toneLevel(log.left(1, from: from), 3000) > 0.09)
        #expect(toneLevel(log.left(2, from: from), 1000) > 0.2 && toneLevel(log.left(2, from: from), 440) < 0.01)
        // The spans follow one another without a gap; each has one block per input it had then (1, then 3).
        log.spans.withLock { spans in
            var next = spans.first?.firstSample ?? 0
            for span in spans {
                #expect(span.firstSample == next && (span.blocks.count == 1 || span.blocks.count == 3))
                next += Int64(span.frameCount)
            }
            #expect(spans.first?.blocks.count == 1 && spans.last?.blocks.count == 3)
        }
    }
}
}

/// Drift, in the suite: microphones 300 ppm fast and 300 ppm slow against CLOCK_MONOTONIC (each its
/// own graph driver), captured for 75 s. Always: both keep coming and their delay stays bounded. The
/// goal (after the estimate settles the delay stays at its target with no growth, no sample is dropped
/// or inserted, the estimate is within 50 ppm of the truth) is checked and reported as a known issue
/// while issue 13's loop does not reach it on a busy machine. Its own suite (not serialized with the other rigs): it mostly waits, so it overlaps the rest
/// of the suite. The long run is scripts/bench-drift.sh.
@Suite struct AudioInputDriftTests {
    /// A rig with microphones 300 ppm fast (`fast`, 440 Hz) and 300 ppm slow (`slow`, 1 kHz), captured
    /// by an input set already playing both.
    /// The rig, the capture, and the two microphones' processes (fast first).
    static func startDriftingMicrophones(chunkDuration: Double = AudioInputSet.standardChunkDuration) throws -> (PipeWireRig, AudioInputSet, [ChildProcess]) {
        let rig = try PipeWireRig()
        try rig.start()
        let producers = [try rig.startMicrophone(node: "fast", tone: 440, ppm: 300), try rig.startMicrophone(node: "slow", tone: 1000, ppm: -300)]
        let inputs = AudioInputSet(inputs: [microphone("fast", number: 1, remote: rig.remote, retryInterval: 2, chunkDuration: chunkDuration),
                                            microphone("slow", number: 2, remote: rig.remote, retryInterval: 2, chunkDuration: chunkDuration)],
                                   chunkDuration: chunkDuration) { _ in }
        inputs.start()
        #expect(waitUntil(seconds: 10) { inputs.status.allSatisfy { $0.state == "playing" } }, "\(inputs.status)")
        return (rig, inputs, producers)
    }

    @Test func microphonesThreeHundredPPMFastAndSlowStayOnTheProgramClock() throws {
        let (rig, inputs, _) = try Self.startDriftingMicrophones()
        defer {
            inputs.stop()
            rig.stop()
        }
        let started = MonotonicClock.now()
        // Settle (the loop ~25 s), then watch for 35 s. Every wake-up's lateness is kept for the report: a
        // machine so busy that this thread oversleeps starves the sources and the capture too.
        var latest: UInt64 = 0, settled: [AudioInputStatus] = []
        var fills: [[Double]] = [[], []]
        while MonotonicClock.now() < started + 75_000_000_000 {
            let asleep = MonotonicClock.now()
            MonotonicClock.sleep(seconds: 0.1)
            let woke = MonotonicClock.now()
            if woke > started + 15_000_000_000 { latest = max(latest, woke - asleep - 100_000_000) }
            if woke < started + 40_000_000_000 { continue }
            if settled.isEmpty { settled = inputs.status }
            if fills[0].count < Int((Double(woke - started) / 1e9 - 40) * 2) {
                for (index, status) in inputs.status.enumerated() { fills[index].append(status.bufferFill) }
            }
        }
        let end = inputs.status, rate = 48_000.0
        // How busy the machine was (for the report below).
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)).flatMap { Double($0.split(separator: " ")[0]) } ?? 0
        for (index, truth) in [300.0, -300.0].enumerated() {
            let before = settled[index], after = end[index]
            // Whatever the machine does: the input keeps coming and its delay stays bounded (the largest
            // target plus a burst's worth).
            #expect(after.framesCaptured > before.framesCaptured + 48_000 * 10)
            #expect(fills[index].allSatisfy { $0 < Double(AudioCapture.maximumTarget) + rate * (AudioCapture.jumpThreshold + 0.05) },
                    "input \(index): fill \(fills[index])")
            print("AudioInputDriftTests: input \(index): estimated \(after.estimatedPPM) ppm (truth \(truth)), discarded "
                  + "\(after.framesDiscarded - before.framesDiscarded), inserted \(after.framesInserted - before.framesInserted) after settling; "
                  + "this thread overslept by up to \(latest / 1_000_000) ms, load average \(load)")
            // What issue 13 asks. The loop now holds against a late clock thread and late quanta
            // (JitterBufferLoopTests); what it cannot hold is a machine so loaded (a load of 15-19 on 2
            // cores: the suite beside other builds) that the virtual microphones themselves, ordinary
            // processes pacing their graph from a 2 ms timer, stall for 100 ms and more every few
            // seconds: the buffer runs dry (the last resort), the target grows to its 125 ms bound and the
            // integral, resting after each restart, never runs. The checks run every time and their
            // failures are reported as a known issue, not hidden (docs/audio.md, docs/benchmarks.md).
            withKnownIssue("issue 13: on a machine loaded enough to starve the virtual microphones, their underruns need the last resort",
                           isIntermittent: true) {
                #expect(abs(after.estimatedPPM - truth) < 50, "input \(index): estimated \(after.estimatedPPM) ppm, truth \(truth)")
                #expect(after.framesDiscarded == before.framesDiscarded && after.framesInserted == before.framesInserted
                        && after.underruns == before.underruns, "input \(index): no last resort after settling: \(before) -> \(after)")
                // The delay: within 2 ms of the target all along, and no growth (first and last 10 s agree to 0.5 ms).
                let target = Double(after.bufferTarget)
                #expect(fills[index].allSatisfy { abs($0 - target) < rate * 0.002 }, "input \(index): fill \(fills[index]) vs target \(target)")
                let head = fills[index].prefix(20).reduce(0, +) / 20, tail = fills[index].suffix(20).reduce(0, +) / 20
                #expect(abs(tail - head) < rate * 0.0005, "input \(index): fill \(head) -> \(tail)")
            }
        }
    }
}

@Suite struct USBDeviceKeyTests {
    /// A webcam's microphone (ALSA through PipeWire, udev's path or sysfs) and its camera (V4L2's bus
    /// info, or PipeWire's V4L2 device path) give the same key; another port does not.
    @Test func aWebcamsMicrophoneAndItsCameraShareTheKey() {
        let camera = USBDeviceKey.fromV4L2(busInfo: "usb-0000:00:14.0-1.4")
        #expect(camera == "usb-0000:00:14.0-1.4")
        #expect(USBDeviceKey.fromBusPath("pci-0000:00:14.0-usb-0:1.4:1.2") == camera)
        #expect(USBDeviceKey.fromPipeWire(node: ["node.name": "alsa_input.usb-Cam"], device: ["device.bus-path": "pci-0000:00:14.0-usb-0:1.4:1.0"]) == camera)
        #expect(USBDeviceKey.fromSysfs("/devices/pci0000:00/0000:00:14.0/usb1/1-1.4/1-1.4:1.2/sound/card1") == camera)
        #expect(USBDeviceKey.fromBusPath("pci-0000:00:14.0-usb-0:2:1.0") != camera)
        #expect(USBDeviceKey.fromV4L2(busInfo: "platform:vivid-000") == nil)
        #expect(USBDeviceKey.fromPipeWire(node: ["device.bus-path": "pci-0000:00:1f.3"]) == nil)
    }
}

extension PipeWireDaemonTests {
@Suite(.serialized) struct PipeWireAudioDiscoveryTests {
    /// Every Audio/Source is found (the daemon's own adapter, a driver stream, a plain stream), with an
    /// identity that survives its producer's restart; one that goes away is reported lost, then back.
    @Test func findsEveryAudioSourceAndFollowsOneGoingAndComingBack() throws {
        let rig = try PipeWireRig()
        try rig.start()
        try rig.startMicrophone(node: "mic-a", tone: 440)
        try rig.startMicrophone(node: "vstream", tone: 1000, plainStream: true)
        let added = Mutex<[PipeWireAudioSource]>([]), removed = Mutex<[PipeWireAudioSource]>([])
        let discovery = PipeWireAudioDiscovery(remote: rig.remote, retryInterval: 0.2)
        discovery.start(onAdded: { source in added.withLock { $0.append(source) } }, onRemoved: { source in removed.withLock { $0.append(source) } })
        defer { discovery.stop() }
        let present = discovery.sources
        #expect(present.map(\.nodeName) == ["mic-a", "studio-test-mic", "vstream"], "present before start returns")
        let byName = Dictionary(uniqueKeysWithValues: present.map { ($0.nodeName, $0) })
        #expect(byName["vstream"]?.kind == .stream && byName["mic-a"]?.kind == .stream && byName["studio-test-mic"]?.kind == .other)
        #expect(byName["vstream"]?.identity == "pipewire:vstream")
        #expect(present.allSatisfy { $0.usbDevice == nil })
        rig.stopCamera(node: "vstream")
        #expect(waitUntil(seconds: 15) { removed.withLock { $0.map(\.nodeName) } == ["vstream"] })
        try rig.startMicrophone(node: "vstream", tone: 1000, plainStream: true)
        #expect(waitUntil(seconds: 15) { added.withLock { $0.filter { $0.nodeName == "vstream" }.count } == 2 })
        let back = try #require(discovery.sources.first { $0.nodeName == "vstream" })
        #expect(back.identity == byName["vstream"]?.identity && back.nodeSerial != byName["vstream"]?.nodeSerial)
        // The daemon goes away: everything is lost; it comes back: found again.
        rig.killDaemon()
        #expect(waitUntil(seconds: 15) { discovery.sources.isEmpty })
        try rig.start()
        #expect(waitUntil(seconds: 15) { discovery.sources.map(\.nodeName) == ["studio-test-mic"] }, "\(discovery.sources.map(\.nodeName))")
    }

    /// A source that appears while discovery is busy reporting another (its `onAdded` is slow, the registry
    /// changes while the lock is let go) is still found: discovery looks at every change it has not
    /// looked at, instead of waiting for the next one (in CI a microphone plugged in mid-show was missed
    /// that way when nothing changed after it).
    @Test func aSourceThatAppearsWhileAnotherIsReportedIsFound() throws {
        let rig = try PipeWireRig()
        try rig.start()
        let added = Mutex<[String]>([])
        let discovery = PipeWireAudioDiscovery(remote: rig.remote, retryInterval: 0.2)
        discovery.start(onAdded: { source in
            added.withLock { $0.append(source.nodeName) }
            // The first mid-show source is reported slowly: the second one appears meanwhile.
            if source.nodeName == "slow" { Thread.sleep(forTimeInterval: 1.5) }
        }, onRemoved: { _ in })
        defer { discovery.stop() }
        try rig.startMicrophone(node: "slow", tone: 440)
        #expect(waitUntil(seconds: 15) { added.withLock { $0.contains("slow") } })
        try rig.startMicrophone(node: "meanwhile", tone: 1000)
        #expect(waitUntil(seconds: 15) { added.withLock { $0.contains("meanwhile") } }, "\(added.withLock { $0 })")
    }
}
}
