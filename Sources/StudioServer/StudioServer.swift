import Foundation
import Synchronization
import StudioCore
import StudioSystem
import Capture
import Switcher
import Encoding
import MediaSupport
import Output
import EventStore
import Control
import StudioConfig

/// Wires the stages: cameras -> program switcher -> encoders -> outputs, with the event store and the
/// control socket beside the pipeline. Each stage runs on its own named thread; they meet only through
/// non-blocking hand-offs (`LatestValue`, bounded queues, `EventSink`).
public final class StudioServer: Sendable {
    public let options: ServerOptions
    let log: ServerLog
    let store: EventStore
    let sessionID: Int64
    let events: ServerEventSink
    let switcher: ProgramSwitcher
    let videoStage: VideoEncodingStage
    let audioStage: AudioEncodingStage
    let fanOut: OutputFanOut
    let outputs: [MediaOutput]
    /// Every camera of the session, present and lost, with its ISO recorder (when recording, ISO on).
    let cameras: CameraHub
    let audioSource: any AudioInput
    let control: ControlServer
    let queries: QueryWorker
    /// Why `auto` did not use the GPU, when it did not.
    let encoderChoiceReason: String?
    /// The program recording's row in the store, closed at shutdown.
    let programRecording: Int64?
    let startedAt: Date
    let startedMonotonic: UInt64

    /// Opens the store, starts the session and every stage. Throws with a clear message when the
    /// database, recording directory, encoder or socket cannot be set up; nothing is left running then
    /// (and no empty session is left behind).
    public init(options: ServerOptions) throws {
        self.options = options
        let configuration = options.configuration
        Signals.ignoreSIGPIPE()
        let log = ServerLog()
        self.log = log
        FFmpegLogging.configure(verbose: false, sink: { _, line in log.info("ffmpeg: " + line) })
        var undo: [() -> Void] = [{ log.close() }]
        func unwind() { for step in undo.reversed() { step() } }

        do {
            let store: EventStore
            do { store = try EventStore(path: options.databasePath) } catch {
                throw ServerError("cannot open the database \(options.databasePath): \(error)")
            }
            self.store = store
            undo.append { store.close() }
            for id in try store.recoverOrphanedSessions() {
                log.info("session \(id) had not been closed (the server was killed): marked as crashed")
            }
            if let directory = configuration.recordDirectory { try RecordingDirectory.prepare(directory) }

            // Everything that can fail on bad settings is made before anything starts.
            // The program encoder: VAAPI where the machine has it (auto) or where asked (vaapi: an error
            // if it cannot be used), else x264, with the reason kept for `status` and the event log.
            var videoSettings = VideoEncoderSettings(
                format: configuration.program, bitRate: configuration.video.bitRate, preset: configuration.video.preset,
                keyframeIntervalSeconds: configuration.video.keyframeIntervalSeconds)
            videoSettings.encoder = VideoEncoderChoice(configuration.video.encoder)
            videoSettings.faultInjectionAfterFrames = options.injectEncoderFaultAfterFrames
            let selection = try makeEncoder(for: videoSettings)
            encoderChoiceReason = selection.fallbackReason
            if let reason = selection.fallbackReason { log.info("hardware encoding unavailable, using x264: \(reason)") }
            let audioEncoder = try AACEncoder(format: .program, bitRate: configuration.audio.bitRate)
            // The control socket is claimed before the session starts, so a second server on the same
            // socket fails without leaving an empty session behind.
            let serverBox = WeakServerBox()
            let queries = QueryWorker()
            self.queries = queries
            undo.append { queries.stop() }
            let group = try configuration.socketGroup.map { name in
                guard let gid = SystemGroups.id(ofGroup: name) else {
                    throw ServerError("socket_group \(name): no such group (create it with `groupadd \(name)` and add the operators to it)")
                }
                return gid
            }
            let control = ControlServer(socketPath: options.socketPath, handler: ServerCommands.makeRouter(serverBox, queries: queries),
                                        group: group)
            do { try control.start() } catch {
                throw ServerError("cannot listen on \(options.socketPath): \(error)")
            }
            self.control = control
            undo.append { control.stop() }

            sessionID = try store.startSession(configSnapshot: configuration.jsonSnapshot())
            // A failure from here on closes the session it opened, as `error`.
            undo.append { try? store.endSession(reason: "error") }
            let events = ServerEventSink(store: store, control: control, log: log)
            self.events = events

            // Encoders feed the outputs through the fan-out; the switcher and the audio source feed
            // the encoders. Stages are built downstream first, then started upstream last.
            let fanOut = OutputFanOut()
            self.fanOut = fanOut

            // ISO recordings: each camera encoded and recorded on its own, beside the program recording,
            // including cameras plugged in mid-show (see `CameraHub`).
            // A keyframe at least every second: an editor's cuts and seeks land near one, and a killed
            // server's ISO files keep all but the last second or two (they are flushed at keyframes).
            let audioFormat = audioEncoder.streamDescription
            var makeIso: CameraHub.IsoFactory?
            if let directory = configuration.recordDirectory {
                let settings = IsoRecorder.Settings(preset: configuration.cameras.isoPreset, bitRate: configuration.video.bitRate,
                                                    keyframeIntervalSeconds: min(1, configuration.video.keyframeIntervalSeconds),
                                                    fallbackRate: configuration.program.frameRate,
                                                    staleAfterSeconds: options.cameraLossTimeoutSeconds)
                let session = sessionID, cameraSettings = configuration.cameras
                let programEncoder = configuration.video.encoder, fault = options.injectEncoderFaultAfterFrames
                makeIso = { camera in
                    guard cameraSettings.isoEnabled(forIdentity: camera.identity, displayName: camera.displayName) else { return nil }
                    var settings = settings
                    settings.encoder = VideoEncoderChoice(cameraSettings.isoEncoder(forIdentity: camera.identity, displayName: camera.displayName,
                                                                                    program: programEncoder))
                    settings.faultInjectionAfterFrames = fault
                    let path = RecordingDirectory.isoPath(in: directory, session: session, camera: camera.id)
                    do {
                        let recordingID = try store.addRecording(cameraID: camera.id, path: path)
                        let iso = IsoRecorder(camera: camera, path: path, recordingID: recordingID, settings: settings, events: events, log: log)
                        // The program audio goes into every ISO file; a recorder made mid-show first gets
                        // the audio stream's description, then packets from the next one on.
                        iso.deliverAudio(.format(audioFormat))
                        log.info("ISO \(camera.id.name): \(path) (encoder \(settings.encoder.rawValue), x264 preset \(settings.preset))")
                        return iso
                    } catch {
                        events.emit(StudioEvent(kind: .error, camera: camera.id, details: [
                            "stage": "iso.\(camera.id.name)", "during": "add recording", "error": String(describing: error),
                        ]))
                        return nil
                    }
                }
            }
            let hubBox = HubBox()
            // Mid-show, an encode error switches the program to x264 on the next frame (fresh keyframe,
            // new sequence header downstream, continuous timestamps).
            let fallbackSettings = videoSettings
            let videoStage = VideoEncodingStage(encoder: selection.encoder, events: events, choiceReason: selection.fallbackReason,
                                                fallback: { try makeSoftwareFallback(for: fallbackSettings) },
                                                deliver: { fanOut.deliver($0) })
            // The program audio also goes into every ISO file (so each angle plays with the show's sound).
            let audioStage = AudioEncodingStage(encoder: audioEncoder, events: events, deliver: { item in
                fanOut.deliver(item)
                for iso in hubBox.isoFeeds { iso.deliverAudio(item) }
            })
            self.videoStage = videoStage
            self.audioStage = audioStage

            var outputs: [MediaOutput] = []
            var programRecording: Int64?
            for target in configuration.outputs {
                outputs.append(MediaOutput(destination: OutputDestination(name: target.name, url: target.url), events: events,
                                           requestKeyframe: { videoStage.requestKeyframe() }))
            }
            if let directory = configuration.recordDirectory {
                let path = RecordingDirectory.programPath(in: directory, session: sessionID)
                outputs.append(MediaOutput(destination: OutputDestination(name: "recording", url: path), events: events,
                                           requestKeyframe: { videoStage.requestKeyframe() }))
                programRecording = try store.addRecording(cameraID: nil, path: path)
            }
            self.outputs = outputs
            self.programRecording = programRecording
            for output in outputs {
                fanOut.add(output)
                output.start()
            }

            switcher = ProgramSwitcher(format: configuration.program,
                                       configuration: .init(lossTimeout: options.cameraLossTimeoutSeconds),
                                       events: events,
                                       deliver: { frame, pts in _ = videoStage.submit(frame, pts: pts) })
            let cameras = CameraHub(switcher: switcher, events: events, log: log,
                                    lossTimeoutSeconds: options.cameraLossTimeoutSeconds, makeIso: makeIso)
            self.cameras = cameras
            hubBox.set(cameras)
            undo.append { cameras.stop() }
            let discoveries = try Discoveries.make(Discoveries.Context(
                options: options, namer: Discoveries.namer(store: store, settings: configuration.cameras), events: events, log: log))
            for discovery in discoveries { cameras.attach(discovery) }
            // Give the cameras up to a second to deliver their first frame, so the program opens on a
            // picture rather than on a "waiting" slate; a camera slower than that starts on the slate.
            let firstFrameDeadline = MonotonicClock.now() + 1_000_000_000
            for camera in cameras.present {
                let now = MonotonicClock.now()
                guard now < firstFrameDeadline else { break }
                _ = camera.frames.waitForNewer(than: 0, timeoutSeconds: Double(firstFrameDeadline - now) / 1e9)
            }

            // The program's origin: video frame n and audio sample k are timed from here.
            startedAt = Date()
            startedMonotonic = MonotonicClock.now()
            let origin = startedMonotonic
            switch configuration.audio.source {
            case .pipewire(let node):
                // A PipeWire microphone (an empty name: the default Audio/Source); silence on the clock
                // while it (or the daemon) is missing, picked up again when it returns.
                let node = node.trimmingCharacters(in: .whitespaces)
                audioSource = PipeWireMicrophone(nodeName: node.isEmpty ? nil : node, report: { log.info($0) },
                                                 deliver: { chunk in _ = audioStage.submit(chunk) })
            case .tone, .silence:
                audioSource = TestToneSource(signal: configuration.audio.source == .tone ? .standard : .silence, origin: origin,
                                             deliver: { chunk in _ = audioStage.submit(chunk) })
            }
            switcher.start(origin: origin)
            audioSource.start(origin: origin)
            // Each ISO thread ticks on its camera's rate from the program's origin (one timeline).
            cameras.start(origin: origin)
            serverBox.server = self
        } catch {
            unwind()
            throw error
        }
        log.info("session \(sessionID) started: program \(configuration.program), \(cameras.all.count) camera(s), control socket \(options.socketPath)")
        for output in outputs { log.info("output \(output.destination.name): \(output.destination.maskedURL)") }
    }

    /// Stops every stage in data-flow order so nothing is lost: sources, switcher, encoders (flushed,
    /// end-of-stream), outputs (drained, trailers written; all at once, so the whole stop is bounded by
    /// one output's budget), then the session is closed in the store.
    public func shutdown(reason: String = "stopped", signal: String? = nil) {
        log.info("stopping" + (signal.map { " on \($0)" } ?? ""))
        cameras.stop()
        audioSource.stop()
        switcher.stop()
        let isoRecorders = cameras.isoRecorders
        videoStage.finish()
        for iso in isoRecorders { iso.stopEncoding() }
        audioStage.finish()
        let stopping = (outputs + isoRecorders.map(\.output)).map { output in
            NamedThread.start(name: "stop.\(output.destination.name)") { output.stop(timeoutSeconds: 5) }
        }
        for thread in stopping { thread.join(timeoutSeconds: 6) }
        control.stop()
        queries.stop()
        if let programRecording { try? store.finishRecording(id: programRecording) }
        for iso in isoRecorders { try? store.finishRecording(id: iso.recordingID) }
        do { try store.endSession(reason: reason) } catch { log.info("could not close the session: \(error)") }
        store.close()
        log.info("session \(sessionID) ended")
        log.close()
    }

    var uptimeSeconds: Double { Double(MonotonicClock.now() - startedMonotonic) / 1e9 }
}

extension VideoEncoderChoice {
    init(_ choice: EncoderChoice) {
        switch choice {
        case .auto: self = .auto
        case .vaapi: self = .vaapi
        case .x264: self = .x264
        }
    }
}

/// Lets the audio stage, made before the hub, reach the hub's ISO recorders.
private final class HubBox: Sendable {
    private let hub = Mutex<CameraHub?>(nil)
    func set(_ value: CameraHub) { hub.withLock { $0 = value } }
    var isoFeeds: [IsoRecorder] { hub.withLock { $0 }?.isoFeeds ?? [] }
}

public struct ServerError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Recording files: one directory, one file per session and source.
enum RecordingDirectory {
    static func prepare(_ directory: String) throws {
        let manager = FileManager.default
        do { try manager.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw ServerError("cannot create the recording directory \(directory): \(error.localizedDescription)")
        }
        guard manager.isWritableFile(atPath: directory) else {
            throw ServerError("the recording directory \(directory) is not writable by this user")
        }
    }

    static func programPath(in directory: String, session: Int64) -> String {
        (directory as NSString).appendingPathComponent("session-\(session)-program.mkv")
    }

    /// A camera's ISO recording: `session-ID-camN.mkv`.
    static func isoPath(in directory: String, session: Int64, camera: CameraID) -> String {
        (directory as NSString).appendingPathComponent("session-\(session)-\(camera.name).mkv")
    }
}
