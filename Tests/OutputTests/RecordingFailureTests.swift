#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
import StudioCore
import StudioSystem
import Encoding
import MediaSupport
import Output
import TestSupport

/// The reading end of a named pipe (FIFO) that a recording is written into: a "disk" the test controls.
/// Opened (non-blocking) at creation, so the writer's open does not wait; its thread keeps nothing from
/// the writer until `stallSeconds` have passed, then copies everything it reads, until the writer closes
/// (end of file after some data) or `stop()` closes the reading end (the writer then gets EPIPE).
final class FIFOReader: Sendable {
    let path: String
    private let fd: Int32
    private let state = Mutex<(bytes: [UInt8], firstReadAt: UInt64?)>(([], nil))
    private let stopRequested = Atomic<Bool>(false)
    private let thread = Mutex<NamedThread?>(nil)

    init(path: String, stallSeconds: Double = 0) throws {
        self.path = path
        try syscall("mkfifo") { mkfifo(path, 0o644) }
        fd = try syscall("open") { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        let started = MonotonicClock.now() + UInt64(stallSeconds * 1e9)
        let t = NamedThread.start(name: "test.fifo") { [self] in run(startAt: started) }
        thread.withLock { $0 = t }
    }

    private func run(startAt: UInt64) {
        defer { close(fd) }
        while !stopRequested.load(ordering: .relaxed), MonotonicClock.now() < startAt { MonotonicClock.sleep(seconds: 0.005) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let giveUp = MonotonicClock.now() + 20_000_000_000
        while !stopRequested.load(ordering: .relaxed), MonotonicClock.now() < giveUp {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                let now = MonotonicClock.now()
                state.withLock {
                    $0.bytes.append(contentsOf: buffer[0..<count])
                    if $0.firstReadAt == nil { $0.firstReadAt = now }
                }
                continue
            }
            // 0 is end of file only once a writer has been there (before, no writer has opened it yet).
            if count == 0, state.withLock({ !$0.bytes.isEmpty }) { return }
            MonotonicClock.sleep(seconds: 0.005)
        }
    }

    var bytes: [UInt8] { state.withLock { $0.bytes } }
    var firstReadAt: UInt64? { state.withLock { $0.firstReadAt } }

    /// Waits for the thread to end (at the writer's end of file, or at once after `stop`).
    func join() { thread.withLock { $0 }?.join() }

    /// Closes the reading end: the writer's next write fails with EPIPE.
    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        join()
    }
}

/// A filler NAL unit (type 12) of `size` bytes, length-prefixed like the encoder's packets: valid H.264
/// that decoders skip, to make a real keyframe as large as a test needs.
private func fillerNAL(size: Int) -> [UInt8] {
    let body = [0x0C] + [UInt8](repeating: 0xFF, count: size - 2) + [0x80]
    let length = UInt32(body.count)
    return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + body
}

@Suite(.serialized) struct RecordingFailureTests {
    init() { FFmpegLogging.configure(verbose: false) }

    /// libavformat asks the interrupt callback before each buffer it writes; with the network's 1 s
    /// per-operation deadline, a disk write that took longer made the following write fail and ended the
    /// recording. A file has no such deadline.
    @Test func aDiskWriteSlowerThanTheNetworkTimeoutDoesNotEndTheRecording() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("program.flv").path
        let stall = 2.0
        // Before the reader: it stalls from its own start, which a busy machine may take a while to reach.
        let readerStarted = MonotonicClock.now()
        let reader = try FIFOReader(path: path, stallSeconds: stall)
        let events = CollectingSink()
        let output = MediaOutput(destination: OutputDestination(name: "recording", url: path), events: events,
                                 requestKeyframe: {}, policy: OutputPolicy(ioTimeoutSeconds: 1))
        output.start()

        // One second of real program media; the first keyframe carries 400 kB of filler, far more than
        // the pipe and libavformat's buffer hold, so writing it blocks until the reader wakes up.
        let videoEncoder = try X264Encoder(settings: testSettings)
        let audioEncoder = try AACEncoder()
        output.accept(.format(videoEncoder.streamDescription))
        output.accept(.format(audioEncoder.streamDescription))
        var sentVideo = 0, sentAudio = 0
        for n in 0..<30 {
            let frame = SyntheticMedia.frame(width: testSettings.width, height: testSettings.height, yuv: SyntheticMedia.red, index: n)
            for var packet in try videoEncoder.encode(frame, pts: MediaTime(count: Int64(n), rate: Rational(30)), forceKeyframe: n == 0) {
                if sentVideo == 0 {
                    #expect(packet.isKeyframe)
                    packet.data += fillerNAL(size: 400_000)
                }
                output.accept(.packet(packet))
                sentVideo += 1
            }
            for packet in try audioEncoder.encode(SyntheticMedia.audio(firstSample: Int64(n) * 1600, count: 1600)) {
                output.accept(.packet(packet))
                sentAudio += 1
            }
        }
        for packet in try videoEncoder.flush() { output.accept(.packet(packet)); sentVideo += 1 }
        for packet in try audioEncoder.flush() { output.accept(.packet(packet)); sentAudio += 1 }

        // Well past the network deadline, the writer is still stuck in the big write.
        MonotonicClock.sleep(until: readerStarted + UInt64((stall - 0.4) * 1e9))
        #expect(output.statistics.packetsSent < sentVideo + sentAudio, "the write is blocked on the stalled reader")
        #expect(reader.firstReadAt == nil)

        // Every packet is written, except audio from before the first keyframe (the encoder's priming).
        let handled = { let s = output.statistics; return s.packetsSent + s.droppedVideo + s.droppedAudio }
        #expect(waitUntil(seconds: 10) { handled() == sentVideo + sentAudio }, "\(handled()) of \(sentVideo + sentAudio)")
        output.stop(timeoutSeconds: 3)
        reader.join()

        let statistics = output.statistics
        #expect(statistics.droppedVideo == 0 && statistics.droppedAudio <= 1)
        let writtenAudio = sentAudio - statistics.droppedAudio
        #expect(events.events(.error).isEmpty, "\(events.events(.error).map(\.details))")
        #expect(statistics.state == .stopped)
        #expect(statistics.lastError == nil)
        #expect(events.outputKinds == ["recording_started", "recording_stopped"])
        let firstRead = try #require(reader.firstReadAt)
        #expect(firstRead >= readerStarted + UInt64(stall * 1e9), "the reader really stalled")
        let bytes = reader.bytes
        #expect(Int64(bytes.count) == statistics.bytesSent)

        // What reached the "disk" is a complete, clean FLV with every packet.
        let copy = directory.appendingPathComponent("copy.flv")
        try Data(bytes).write(to: copy)
        let probe = try MediaProbe.probe(copy)
        #expect(probe.videoPackets.count == sentVideo && probe.audioPackets.count == writtenAudio)
        #expect(probe.videoPackets.first?.isKeyframe == true && (probe.videoPackets.first?.size ?? 0) > 400_000)
        let decoded = try MediaProbe.decodeCheck(copy)
        #expect(decoded.clean, "\(decoded.errors)")
        #expect(decoded.videoFrames == sentVideo)
    }

    /// A write error (here EPIPE: the reader of the FIFO went away) closes the file and opens
    /// `NAME-part1.mkv` with backoff, retrying while the directory is missing, and records on.
    @Test func aWriteErrorContinuesTheRecordingInANewFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("program.mkv")
        let part1 = directory.appendingPathComponent("program-part1.mkv")
        let reader = try FIFOReader(path: path.path)
        let events = CollectingSink()
        let feed = try ProgramFeed(fanOut: OutputFanOut())
        let output = feed.startRecording(path, events: events)
        feed.run(seconds: 1.2)
        #expect(events.events(.recordingStarted).count == 1)

        // The disk "goes away": the directory is removed, then the file's reader closes.
        try FileManager.default.removeItem(at: directory)
        reader.stop()
        let feedUntil = { (condition: () -> Bool) in feed.run(until: condition) }
        #expect(feedUntil { output.statistics.lastError?.contains("avio_open2") == true },
                "reopening fails while the directory is missing: \(output.statistics.lastError ?? "")")
        #expect(output.statistics.state == .reconnecting)
        let failedAttempts = output.statistics.reconnectAttempts
        #expect(failedAttempts >= 1)

        // The disk comes back.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        #expect(feedUntil { events.events(.recordingStarted).count == 2 })
        feed.run(seconds: 1.5)
        feed.finish()
        output.stop(timeoutSeconds: 3)

        let statistics = output.statistics
        #expect(statistics.state == .stopped)
        #expect(statistics.currentFile == part1.path)
        #expect(statistics.reconnectCount == 1)
        #expect(statistics.reconnectAttempts > failedAttempts)
        #expect(events.outputKinds.filter { $0.hasPrefix("recording_") }
                == ["recording_started", "recording_stopped", "recording_started", "recording_stopped"])
        let started = events.events(.recordingStarted), stopped = events.events(.recordingStopped)
        #expect(started.map { $0.details["path"] } == [path.path, part1.path])
        #expect(stopped.map { $0.details["path"] } == [path.path, part1.path])
        #expect(stopped.map { $0.details["reason"] } == ["write failed", "stopped"])
        let errors = events.events(.error)
        #expect(errors.count == 1, "one error event for the failure, none per retry")
        #expect(errors.first?.details["during"] == "write recording")
        #expect(errors.first?.details["path"] == path.path)
        #expect(errors.first?.details["output"] == "recording")

        // The new part is a clean recording that starts on a keyframe at the program time announced.
        let firstMilliseconds = try #require(started.last?.details["first_program_ms"].flatMap { Int64($0) })
        #expect(firstMilliseconds > 1200)
        let probe = try MediaProbe.probe(part1)
        #expect(probe.videoPackets.count >= 30)
        #expect(probe.videoPackets.first?.isKeyframe == true)
        #expect(probe.videoPackets.first.flatMap { $0.ptsMilliseconds }.map { Int64($0.rounded()) } == firstMilliseconds)
        let decoded = try MediaProbe.decodeCheck(part1)
        #expect(decoded.clean, "\(decoded.errors)")
        // What the first file got before the failure is playable too.
        let before = directory.appendingPathComponent("before.mkv")
        try Data(reader.bytes).write(to: before)
        #expect(try MediaProbe.probe(before).videoPackets.count >= 20)
    }
}
