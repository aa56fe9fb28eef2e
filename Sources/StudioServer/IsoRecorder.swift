import Foundation
import Synchronization
import StudioCore
import StudioSystem
import Capture
import Encoding
import Switcher
import Output

/// What `studio status` shows for one ISO feed.
struct IsoStatistics: Sendable {
    var camera: CameraID
    var path: String
    var encoderName = "-"
    /// Why this ISO is not on the encoder asked for (auto without a GPU, or a mid-show fallback).
    var fallbackReason: String?
    /// +1 at each new stream (a size change, a fallback to x264): the file output starts `NAME-gN.mkv`.
    var generation = 0
    var width = 0
    var height = 0
    /// Frames encoded into the ISO file.
    var framesEncoded = 0
    /// Ticks the ISO thread missed because encoding took longer than a frame (the encoder fell behind).
    var framesSkipped = 0
    /// Frames the ISO could not use (a pixel format libswscale cannot convert).
    var framesUnusable = 0
    var encodeErrors = 0
}

/// Carries the encoder (not Sendable) to the ISO thread.
///
/// `@unchecked Sendable`: `encoder` is only set and used by the ISO thread (`iso.camN`); the box is
/// created empty and handed to that one thread.
private final class EncoderSlot: @unchecked Sendable {
    var encoder: VideoEncoder?
    /// What `encoder` was opened with (the software fallback keeps all but the encoder).
    var settings: VideoEncoderSettings?
    /// Stream generation: +1 each time the encoder is reopened at a new size or replaced by x264.
    var generation = 0
    /// The mid-show fallback to x264 happened (it happens once).
    var fellBack = false
    private var scaler: FrameScaler?

    /// The frame as I420 at its own size: I420 passes through, any other camera format is converted
    /// (libswscale); nil when it cannot be.
    func i420(_ frame: VideoFrame, sequence: UInt64) -> VideoFrame? {
        if frame.format == .i420 { return frame }
        if scaler?.width != frame.width || scaler?.height != frame.height {
            scaler = FrameScaler(width: frame.width, height: frame.height, pool: FramePool(
                capacity: VideoFrame.byteCount(format: .i420, width: frame.width, height: frame.height), limit: 4))
        }
        return try? scaler?.convert(frame, sequence: sequence)
    }
}

/// One camera's ISO feed: its own thread (`iso.camN`) takes the camera's newest frame on the camera's
/// frame rate (timed from the program's origin), converts it to I420 at the camera's own size when the
/// camera delivers another format, encodes it with x264 and hands the packets, with the program's audio,
/// to a Matroska file output (`DIR/session-ID-camN.mkv`). It never touches the program path: it reads
/// the camera's `LatestValue` like the switcher does, and when encoding takes longer than a frame it
/// skips the ticks it missed, counts them and warns (`frames_dropped`, stage `iso.camN`, at most once
/// per 5 s).
final class IsoRecorder: Sendable {
    struct Settings: Sendable {
        var preset: String
        var bitRate: Int
        var keyframeIntervalSeconds: Double
        /// Rate used when the camera has not reported its own.
        var fallbackRate: Rational
        /// A frame older than this is not encoded (the camera stopped delivering).
        var staleAfterSeconds: Double
        /// auto (VAAPI where the machine has it), vaapi or x264; VAAPI falls back to x264 by itself.
        var encoder: VideoEncoderChoice = .x264
        /// Testing aid (`--inject-encoder-fault N`): the encoder fails after N frames.
        var faultInjectionAfterFrames: Int?
    }

    /// The camera recorded; a returning device's new camera object replaces it (`rebind`).
    private let source: Mutex<any Camera>
    let cameraID: CameraID
    let path: String
    let recordingID: Int64
    let output: MediaOutput
    let stage: String
    private let settings: Settings
    private let fanOut: OutputFanOut
    private let events: any EventSink
    private let log: ServerLog
    private let clock: any Clock
    private let worker = WorkerThread()
    private let counters: Mutex<IsoStatistics>
    private let keyframeFlag: KeyframeFlag
    private let started = Atomic<Bool>(false)

    init(camera: any Camera, path: String, recordingID: Int64, settings: Settings, events: any EventSink, log: ServerLog,
         clock: any Clock = .monotonic) {
        self.source = Mutex(camera)
        self.clock = clock
        self.cameraID = camera.id
        self.path = path
        self.recordingID = recordingID
        self.settings = settings
        self.events = events
        self.log = log
        stage = "iso.\(camera.id.name)"
        counters = Mutex(IsoStatistics(camera: camera.id, path: path))
        // Video from this ISO's thread plus the program audio: two producers end the stream.
        fanOut = OutputFanOut(expectedEndOfStreams: 2)
        let flag = KeyframeFlag()
        output = MediaOutput(destination: OutputDestination(name: "iso-\(camera.id.name)", url: path), events: events,
                             requestKeyframe: { flag.set() })
        keyframeFlag = flag
        fanOut.add(output)
    }

    var camera: any Camera { source.withLock { $0 } }

    /// Records `camera` from now on (the same device came back as a new camera object): same file,
    /// same timeline; the encoder is reopened if its size changed.
    func rebind(to camera: any Camera) { source.withLock { $0 = camera } }

    /// The program audio's items (format, packets, end of stream) for this ISO's file. Never blocks.
    func deliverAudio(_ item: MediaItem) { fanOut.deliver(item) }

    var statistics: IsoStatistics { counters.withLock { $0 } }

    /// Starts the output and the ISO thread, ticking from the program's `origin`. Only the first call
    /// does anything.
    func start(origin: UInt64) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        output.start()
        let rate = camera.currentFormat?.frameRate ?? settings.fallbackRate
        // Tick n is due at `origin + n / rate`: the program's origin, so every angle lines up with the
        // program on one timeline.
        let grid = FrameGrid(origin: origin, rate: rate)
        let slot = EncoderSlot()
        worker.start(name: stage) { [self] in
            run(grid: grid, slot: slot)
        }
    }

    /// Stops the ISO thread: the encoder is flushed and the video stream ended (the file is finished
    /// once the program audio has ended too; `output.stop` then drains it).
    func stopEncoding() { worker.stop() }

    private func run(grid: FrameGrid, slot: EncoderSlot) {
        var tick: Int64 = 0
        // Skip warnings: the first at once, later ones summed, at most one per 5 s.
        var skips = ThrottledCounter()
        var failed = false
        let staleNanoseconds = UInt64(settings.staleAfterSeconds * 1e9)
        while !worker.isStopRequested {
            guard clock.sleep(until: grid.time(ofFrame: tick), unless: { worker.isStopRequested }) else { break }
            let now = clock.now()
            // Ticks that passed while the previous frame was being encoded are skipped and counted.
            let latest = grid.frame(at: now)
            let skipped = Int(latest - tick)
            if skipped > 0 {
                counters.withLock { $0.framesSkipped += skipped }
                tick = latest
            }
            if let report = skips.note(max(0, skipped), at: now) { reportSkips(report.count) }
            defer { tick += 1 }

            let (frame, _) = camera.frames.latest()
            guard let frame, !failed else { continue }
            if now > frame.captureTime && now - frame.captureTime > staleNanoseconds { continue }
            guard let picture = slot.i420(frame, sequence: UInt64(tick)) else {
                counters.withLock { $0.framesUnusable += 1 }
                continue
            }
            // The camera came back at another size (or was set to one): finish the old stream and open
            // a new encoder; the file output starts a new part on the new format.
            if let encoder = slot.encoder, picture.width != encoder.settings.width || picture.height != encoder.settings.height {
                flush(encoder, generation: slot.generation)
                slot.encoder = nil
                slot.generation += 1
                log.info("ISO \(cameraID.name): the camera now delivers \(picture.width)x\(picture.height); reopening its encoder")
            }
            if slot.encoder == nil {
                guard open(slot, width: picture.width, height: picture.height, rate: grid.rate) else {
                    failed = true
                    continue
                }
            }
            guard let encoder = slot.encoder else { continue }
            let force = keyframeFlag.take()
            let pts = grid.pts(ofFrame: tick)
            do {
                let packets = try encoder.encode(picture, pts: pts, forceKeyframe: force)
                counters.withLock { $0.framesEncoded += 1 }
                deliver(packets, generation: slot.generation)
            } catch {
                let first = counters.withLock { statistics -> Bool in
                    statistics.encodeErrors += 1
                    return statistics.encodeErrors == 1
                }
                if first {
                    events.emit(StudioEvent(kind: .error, camera: cameraID, programTime: pts, details: [
                        "stage": stage, "during": "encode", "encoder": encoder.name, "error": String(describing: error),
                    ]))
                }
                // The encoder (the GPU's, typically) failed mid-show: this feed goes on with a fresh x264
                // from this very frame (a keyframe, a new stream generation, so a new file; timestamps
                // continue). Once per feed, like the program's fallback.
                if !slot.fellBack {
                    slot.fellBack = true
                    fallBack(slot, from: encoder, picture: picture, pts: pts, error: error)
                }
            }
        }
        if let encoder = slot.encoder { flush(encoder, generation: slot.generation) }
        if let report = skips.flush() { reportSkips(report.count) }
        fanOut.deliver(.endOfStream)
    }

    /// Opens the encoder for `width`x`height` (VAAPI where asked and possible, else x264) and announces
    /// its stream; false (with an error event) if no encoder can be opened.
    private func open(_ slot: EncoderSlot, width: Int, height: Int, rate: Rational) -> Bool {
        var encoderSettings = VideoEncoderSettings(
            width: width, height: height, frameRate: rate, bitRate: settings.bitRate, preset: settings.preset,
            keyframeIntervalSeconds: settings.keyframeIntervalSeconds, encoder: slot.fellBack ? .x264 : settings.encoder)
        // After a mid-show fallback the feed stays on x264 (a new size reopens x264, not the failed GPU).
        if !slot.fellBack { encoderSettings.faultInjectionAfterFrames = settings.faultInjectionAfterFrames }
        do {
            let selection = try makeEncoder(for: encoderSettings)
            slot.encoder = selection.encoder
            slot.settings = encoderSettings
            announce(selection.encoder, generation: slot.generation, kind: .encoderChosen,
                     extra: selection.fallbackReason.map { ["fallback_reason": $0] } ?? [:])
            counters.withLock { $0.fallbackReason = selection.fallbackReason }
            return true
        } catch {
            events.emit(StudioEvent(kind: .error, camera: cameraID, details: [
                "stage": stage, "during": "open encoder", "error": String(describing: error),
            ]))
            return false
        }
    }

    private func fallBack(_ slot: EncoderSlot, from failed: VideoEncoder, picture: VideoFrame, pts: MediaTime, error: Error) {
        guard let encoderSettings = slot.settings else { return }
        flush(failed, generation: slot.generation)
        do {
            let software = try makeSoftwareFallback(for: encoderSettings)
            slot.encoder = software
            slot.generation += 1
            let reason = String(describing: error)
            counters.withLock { $0.fallbackReason = reason }
            announce(software, generation: slot.generation, kind: .encoderFallback,
                     extra: ["from": failed.name, "to": software.name, "reason": reason])
            log.info("ISO \(cameraID.name): \(failed.name) failed (\(reason)); going on with \(software.name)")
            deliver(try software.encode(picture, pts: pts, forceKeyframe: true), generation: slot.generation)
            counters.withLock { $0.framesEncoded += 1 }
        } catch {
            slot.encoder = nil
            events.emit(StudioEvent(kind: .error, camera: cameraID, programTime: pts, details: [
                "stage": stage, "during": "fallback", "error": String(describing: error),
            ]))
        }
    }

    /// Tells the file output (a `.format` of this generation) and the log (an event) about an encoder.
    private func announce(_ encoder: VideoEncoder, generation: Int, kind: EventKind, extra: [String: String]) {
        var description = encoder.streamDescription
        description.generation = generation
        counters.withLock {
            $0.encoderName = encoder.name
            $0.width = description.width
            $0.height = description.height
            $0.generation = generation
        }
        var details = [
            "kind": "iso", "stage": stage, "encoder": encoder.name, "preset": encoder.settings.preset,
            "bitrate": String(encoder.settings.bitRate), "size": "\(description.width)x\(description.height)",
            "frame_rate": description.frameRate.description, "generation": String(generation),
        ]
        details.merge(extra) { $1 }
        events.emit(StudioEvent(kind: kind, camera: cameraID, details: details))
        fanOut.deliver(.format(description))
    }

    private func deliver(_ packets: [EncodedPacket], generation: Int) {
        for var packet in packets {
            packet.generation = generation
            fanOut.deliver(.packet(packet))
        }
    }

    /// Drains an encoder's delayed packets into the file.
    private func flush(_ encoder: VideoEncoder, generation: Int) {
        do {
            deliver(try encoder.flush(), generation: generation)
        } catch {
            events.emit(StudioEvent(kind: .error, camera: cameraID, details: [
                "stage": stage, "during": "flush", "error": String(describing: error),
            ]))
        }
    }

    private func reportSkips(_ count: Int) {
        let total = counters.withLock { $0.framesSkipped }
        events.emit(StudioEvent(kind: .framesDropped, camera: cameraID, details: [
            "stage": stage, "reason": "ISO encoder behind (software encoding cannot keep up)",
            "dropped": String(count), "dropped_total": String(total),
        ]))
        log.info("warning: ISO \(cameraID.name) skipped \(count) frame(s) (\(total) in all): its software encoder cannot keep up; try a faster iso preset, smaller cameras or --no-iso")
    }
}

/// Set by the file output when it needs a keyframe (a new file), taken by the ISO thread.
private final class KeyframeFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    func take() -> Bool { value.exchange(false, ordering: .acquiringAndReleasing) }
}
