import Foundation
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
import LivePictures
import TallyOut

// The steps of `StudioServer.init` that are not the composition itself: how the log, the store, the
// control socket and the session are opened, how the parts are made from the config, and what the start
// says. The init calls them in order; each registers its service where it starts one.

extension StudioServer {
    /// The server's log thread, with FFmpeg's lines in it. SIGPIPE is ignored first: a closed socket or
    /// pipe must surface as EPIPE, never end the process.
    static func startLog() -> ServerLog {
        Signals.ignoreSIGPIPE()
        let log = ServerLog()
        FFmpegLogging.configure(verbose: false, sink: { _, line in log.info("ffmpeg: " + SecretMasking.maskURLs(in: line)) })
        return log
    }

    /// The list every service joins as it starts. A service whose stop takes a second or more says so (on
    /// a starved machine the whole stop has taken over 20 s: which step it was is the first thing to know).
    static func serviceGroup(log: ServerLog) -> ServiceGroup {
        ServiceGroup(onStopped: { name, seconds in
            if seconds >= 1, name != "log" { log.info("stopping \(name) took \(String(format: "%.1f", seconds)) s") }
        })
    }

    /// The event store (service `store`), with the sessions a killed server left open marked as crashed.
    static func openStore(_ options: ServerOptions, health: StoreHealth, services: ServiceGroup, log: ServerLog) throws -> EventStore {
        let store: EventStore
        do {
            store = try services.make("store", try EventStore(path: options.databasePath, notify: health.handle)) { $0.close() }
        } catch {
            throw ServerError("cannot open the database \(options.databasePath): \(error)")
        }
        for id in try store.recoverOrphanedSessions() {
            log.info("session \(id) had not been closed (the server was killed): marked as crashed")
        }
        return store
    }

    /// The control socket (service `control`), claimed before the session starts, so a second server on
    /// the same socket fails without leaving an empty session behind.
    static func startControl(_ options: ServerOptions, router: ControlRouter<StudioServer>, group: UInt32?,
                             services: ServiceGroup) throws -> ControlServer {
        let control = ControlServer(socketPath: options.socketPath, handler: router, group: group)
        try services.start("control", {
            do { try control.start() } catch { throw ServerError("cannot listen on \(options.socketPath): \(error)") }
        }, stop: { control.stop() })
        return control
    }

    /// The session's row (service `session`), which keeps the config it ran with and the audio source it
    /// took (the default resolved: microphones or the tone). Its stop ends the row as `ending` says.
    static func startSession(_ options: ServerOptions, store: EventStore, ending: SessionEnding, services: ServiceGroup,
                             log: ServerLog) throws -> Int64 {
        var snapshot = options.configuration
        snapshot.audio.source = options.configuration.audio.source(testCameras: options.testCameraCount > 0)
        let session = try store.startSession(configSnapshot: snapshot.jsonSnapshot())
        services.add("session", stop: {
            do { try store.endSession(reason: ending.reason) } catch { log.info("could not close the session: \(error)") }
            log.info("session \(session) ended")
        })
        return session
    }

    /// Says at start when the program's encoder measured too slow for the format (`encoder_overloaded`).
    static func warnIfSlow(_ speed: EncoderSpeed?, events: ServerEventSink, log: ServerLog) {
        guard let speed, !speed.keepsUp else { return }
        log.info("warning: \(speed.summary): \(speed.consequence); try \(slowEncoderFix)")
        events.emit(StudioEvent(kind: .encoderOverloaded, details: speed.eventDetails))
    }

    /// The cameras' hub, with each camera's ISO recorder when recording, its pin's picture (as last
    /// reloaded) and the decode policy of compressed cameras (the console's tiles decoded small).
    static func makeCameraHub(_ options: ServerOptions, session: Int64, switcher: ProgramSwitcher, tiles: TilePictures,
                              reloader: ConfigReloader, audioFormat: StreamDescription, switcherClock: SwitcherClockClient?,
                              events: ServerEventSink, log: ServerLog) -> CameraHub {
        CameraHub(switcher: switcher, events: events, log: log, lossTimeoutSeconds: options.cameraLossTimeoutSeconds,
                  makeIso: isoFactory(options: options, session: session, switcherClock: switcherClock, events: events, log: log, audioFormat: audioFormat),
                  makeSender: senderFactory(options: options, clock: switcherClock, events: events, log: log, audioFormat: audioFormat),
                  pinnedPicture: { camera in
                      reloader.configuration.cameras.pin(forIdentity: camera.identity, displayName: camera.displayName)?
                          .picture ?? PictureSettings()
                  },
                  decoding: DecodePolicy(reducedWidth: tiles.width, reducedInterval: tiles.period,
                                         forceFull: ProcessInfo.processInfo.environment[DecodePolicy.environmentKey]
                                             == DecodePolicy.forcedValue))
    }

    /// The program's destinations, each a `MediaOutput` that asks the video stage for a keyframe;
    /// recordings go into the recording directory and become `recordings` rows once they hold media.
    static func makeOutputs(_ configuration: StudioConfiguration, session: Int64, fanOut: OutputFanOut,
                            videoStage: VideoEncodingStage, events: ServerEventSink) -> ProgramOutputs {
        var recordingPath: (@Sendable (String) -> String)?
        if let directory = configuration.recordDirectory {
            recordingPath = { name in RecordingDirectory.outputPath(in: directory, session: session, output: name) }
        }
        return ProgramOutputs(
            fanOut: fanOut, events: events, recordingPath: recordingPath,
            registerRecording: { name in events.recordings.register(output: name, camera: nil) },
            make: { destination in
                MediaOutput(destination: destination, events: events, requestKeyframe: { videoStage.requestKeyframe() })
            })
    }

    /// What the tile thread reads: the cameras' newest frames, preview, the program's late ticks, the
    /// scenes composed at tile size; and whom it tells that camera tiles are watched.
    static func tileSources(switcher: ProgramSwitcher, cameras: CameraHub, scenes: SceneThumbnails) -> TileSources {
        TileSources(
            camera: { cameras.camera(named: CameraID($0))?.frames }, cameraNames: { cameras.all.map(\.id.name) },
            previewCamera: { switcher.status.preview?.camera?.name }, lateTicks: { switcher.status.lateTicks },
            scenes: TileScenes(names: { scenes.sceneNames }, onPreview: { scenes.sceneOnPreview },
                               compose: { scenes.compose($0, unless: $1) }),
            camerasWatched: { cameras.setTilesWatched($0) })
    }

    /// The session's program loudness, into its row once the audio has stopped.
    static func keepLoudness(of audio: ProgramAudio, in store: EventStore, log: ServerLog) {
        let loudness = audio.meters.loudness
        do { try store.recordLoudness(integratedLUFS: loudness.integratedLUFS, peakDBFS: loudness.samplePeakDBFS) } catch {
            log.info("could not keep the session's loudness: \(error)")
        }
    }
}

extension ProgramOutputs {
    /// The start's outputs: the config's (`outputs:`, `--rtmp`), then the program recording (`--record`).
    func startConfigured(_ configuration: StudioConfiguration, session: Int64) {
        for target in configuration.outputs {
            startAtLaunch(OutputDestination(name: target.name, url: target.url), origin: .config)
        }
        if let directory = configuration.recordDirectory {
            startAtLaunch(OutputDestination(name: "recording", url: RecordingDirectory.programPath(in: directory, session: session)),
                          origin: .record)
        }
    }
}

extension StudioServer {
    /// What the start says once the server is on air: the session, its outputs, scene warnings and the
    /// operator's summary (`StartSummary`).
    func logStart() {
        let configuration = options.configuration
        log.info("session \(sessionID) started: program \(configuration.program), \(cameras.all.count) camera(s), control socket \(options.socketPath)")
        for entry in outputs.entries { log.info("output \(entry.output.destination.name): \(entry.output.destination.maskedURL)") }
        for warning in configuration.sceneWarnings(cameras: switcher.status.sources) { log.info("warning: \(warning)") }
        let settings = audio.settings
        let summary = StartSummary(
            cameras: cameras.all.map { StartSummary.Camera(name: $0.id.name, displayName: $0.displayName, backend: $0.backend) },
            backends: configuration.cameras.backends.sorted().map(\.rawValue), audioSource: audio.source,
            microphones: audio.inputs.filter { $0.isMicrophone && $0.present }.map {
                StartSummary.Microphone(name: $0.name, displayName: $0.displayName, muted: settings[$0.name]?.muted ?? false)
            },
            silenceReason: audio.silenceReason,
            consoleURL: http.map { StartSummary.consoleURL(configuration.http, port: $0.port) },
            streams: !configuration.outputs.isEmpty,
            recording: configuration.recordDirectory.map { RecordingDirectory.programPath(in: $0, session: sessionID) })
        for line in summary.lines { log.info(line) }
    }
}

extension StudioServer {
    /// Every enabled backend's discovery, naming its cameras through the store (the `cameras` table, the
    /// pins, the network cameras' entries, and no scene's name as last reloaded).
    static func discoveries(_ options: ServerOptions, store: EventStore, reloader: ConfigReloader, events: ServerEventSink,
                            log: ServerLog, programOrigin: ProgramOrigin) throws -> [any CameraDiscovery] {
        let namer = Discoveries.namer(store: store, settings: options.configuration.cameras, pulls: options.configuration.network.cameras,
                                      srt: options.configuration.network.srt, players: options.configuration.players,
                                      sceneNames: { Set(reloader.configuration.scenes.map(\.name)) }, log: log)
        return try Discoveries.make(Discoveries.Context(options: options, namer: namer, events: events, log: log, programOrigin: programOrigin))
    }
}
