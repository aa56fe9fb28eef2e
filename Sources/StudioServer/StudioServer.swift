import Foundation
import Synchronization
import StudioCore
import StudioSystem
import Capture
import Switcher
import Encoding
import MediaSupport
import Output
import IsoRecording
import EventStore
import Control
import StudioConfig
import HTTPConsole
import LivePictures
import TallyOut

/// Wires the stages: cameras -> program switcher -> encoders -> outputs, with the event store and the
/// control socket beside the pipeline. Each stage runs on its own named thread; they meet only through
/// non-blocking hand-offs (`LatestValue`, bounded queues, `EventSink`). `init` is the composition, top
/// to bottom (the steps around it are in ServerParts.swift); `topology` reads the result as a graph of
/// nodes and hand-offs (ServerTopology.swift, drawn in docs/architecture.md).
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
    /// The program's destinations, by name: the start's, and those added, stopped and removed mid-show.
    let outputs: ProgramOutputs
    /// Every camera of the session, present and lost, with its ISO recorder (when recording, ISO on).
    let cameras: CameraHub
    /// The program audio: its inputs, the mixer and its meters.
    let audio: ProgramAudio
    /// The console's live tiles (small JPEGs of the cameras, program and preview), made only while watched.
    public let tiles: TilePictures
    /// Requests to the tiles' routes, by route (`/metrics`: the console makes few, not one per picture).
    let tileRequests = TileRequestCounts()
    let control: ControlServer
    /// Tally out: TSL UMD senders and the vMix-compatible server (`tally:`).
    let tally: TallyOutputs
    /// OSC in and out (`osc:`); nil while off.
    let osc: OSCServer?
    /// A capture node's view of its switcher's tally (`node.tally_from`); nil otherwise.
    let switcherTally: SwitcherTallyClient?
    /// A capture node's clock against its switcher's (`node.tally_from`); nil otherwise.
    let switcherClock: SwitcherClockClient?
    /// The HTTP API (nil with `--no-http`) and its event streams.
    let http: HTTPConsole?
    let httpEvents: HTTPEventStream
    let queries: QueryWorker
    /// The configuration in force (the start's, then each reload's) and the reloads' lock.
    let reloader: ConfigReloader
    /// Why `auto` did not use the GPU, when it did not.
    let encoderChoiceReason: String?
    /// The program encoder's speed measured at start (formats above `SpeedProbe.startThreshold` only).
    let startSpeed: EncoderSpeed?
    /// The longest the start's speed probe encodes.
    static let startProbeSeconds = 0.5
    let startedAt: Date
    let startedMonotonic: UInt64
    /// Every running service, stopped in reverse at `shutdown`.
    /// Internal so that a test can hold the list against docs/architecture.md.
    let services: ServiceGroup
    private let ending: SessionEnding

    /// Opens the store, starts the session and every stage, in the order the services table of
    /// docs/architecture.md gives (the pipeline made downstream first: outputs, encoders, cameras,
    /// switcher, audio). Throws with a clear message when the database, recording directory, encoder or
    /// socket cannot be set up; nothing is left running then (and no empty session is left behind).
    public init(options: ServerOptions) throws {
        self.options = options
        let configuration = options.configuration
        let reloader = ConfigReloader(configuration)
        self.reloader = reloader
        let log = Self.startLog()
        self.log = log
        // Every service joins this list as it starts; a failure part-way and `shutdown` both stop the
        // ones that started, last first: sources, switcher, encoders, outputs, session, control, store, log.
        let services = Self.serviceGroup(log: log)
        self.services = services
        let ending = SessionEnding()
        self.ending = ending
        services.add("log", stop: { log.close() })

        do {
            // Everything that can fail on bad settings is checked before anything is created on disk:
            // a refused start leaves no database or recording file behind.
            let checks = try StartChecks(options: options, log: log, probeSeconds: Self.startProbeSeconds)
            encoderChoiceReason = checks.selection.fallbackReason
            startSpeed = checks.speed

            // Beside the pipeline: the store, the queries, the control socket and the HTTP API. Commands
            // answer `unavailable` until the server is complete and attached to the router (at the end).
            let storeHealth = StoreHealth(log: log)
            let store = try Self.openStore(options, health: storeHealth, services: services, log: log)
            self.store = store
            queries = services.make("queries", QueryWorker()) { $0.stop() }
            let router = ServerCommands.makeRouter(queries: queries)
            control = try Self.startControl(options, router: router, group: checks.group, services: services)
            let httpEvents = HTTPEventStream()
            self.httpEvents = httpEvents
            // The live tiles (made only while watched; their thread starts with the pipeline, below).
            let tiles = TilePictures()
            self.tiles = tiles
            let ingest = IngestDesk(settings: configuration.network.rtmp, log: log)
            http = try Self.startHTTP(options: options, router: router, events: httpEvents, tiles: tiles, tileRequests: tileRequests, ingest: ingest,
                                      files: RecordingFileRoutes(store: store),
                                      services: services, log: log)

            // The session and its events (a failure from here on closes the session, as `error`).
            sessionID = try Self.startSession(options, store: store, ending: ending, services: services, log: log)
            let session = sessionID
            let events = ServerEventSink(store: store, control: control, http: httpEvents, log: log)
            self.events = events
            // Stopped before the session ends: what a flapping camera's filter holds is written into it.
            events.startFlapTicks()
            services.add("flaps", stop: { events.stopFlapTicks() })
            storeHealth.attach(events)
            // A switcher with capture nodes keeps their sessions and files in its own (asked on a thread of its
            // own; its stop asks them once more, before the session ends).
            let nodeHistory = NodeHistoryWatch(configuration.network.srt, store: store, log: log, emit: { events.emit($0) })
            if let nodeHistory { events.watchStored { nodeHistory.note($0) } }
            services.start("node-history", { nodeHistory?.start() }, stop: { nodeHistory?.stop() })
            Self.warnIfSlow(checks.speed, events: events, log: log)

            // The pipeline, made downstream first: the fan-out feeds the outputs, the encoders feed the
            // fan-out, the switcher and the audio feed the encoders, the cameras feed the switcher.
            let fanOut = OutputFanOut()
            self.fanOut = fanOut
            // Mid-show, an encode error switches the program to x264 on the next frame (fresh keyframe,
            // new sequence header downstream, continuous timestamps).
            let videoStage = VideoEncodingStage(settings: checks.videoSettings, opened: checks.selection, events: events,
                                                deliver: { fanOut.deliver($0) })
            self.videoStage = videoStage
            // The program tile keeps a reference to the newest program frame (only while it is watched).
            switcher = ProgramSwitcher(format: configuration.program,
                                       configuration: .init(lossTimeout: options.cameraLossTimeoutSeconds),
                                       events: events,
                                       deliver: { frame, pts in
                                           tiles.offerProgram(frame)
                                           _ = videoStage.submit(frame, pts: pts)
                                       })
            // The scene tiles: each scene composed at tile size on the tile thread (prepared when the scenes are set).
            let sceneThumbnails = SceneThumbnails(switcher: switcher, width: tiles.width)
            // The config checked the scenes, overlays and transition already (and that their image and
            // font files exist); what is left is a file that cannot be decoded or a font FreeType refuses.
            do { try Self.applyLive(configuration, to: switcher, log: { log.info($0) }) } catch { throw ServerError("config: \(error)") }
            // A node's clock against its switcher's, measured on a thread of its own (started with the services below).
            let switcherClock = Self.makeSwitcherClock(options, events: events, log: log)
            self.switcherClock = switcherClock
            let cameras = Self.makeCameraHub(options, session: session, switcher: switcher, tiles: tiles, reloader: reloader,
                                             audioFormat: checks.audioEncoder.streamDescription, switcherClock: switcherClock,
                                             events: events, log: log)
            self.cameras = cameras
            ingest.attach(cameras, events: events)
            // The program audio also goes into every ISO file (so each angle plays with the show's sound)
            // and, on a capture node, into every camera's stream to the switcher.
            let audioStage = AudioEncodingStage(encoder: checks.audioEncoder, events: events, deliver: { item in
                fanOut.deliver(item)
                for feed in cameras.cameraFeeds { feed.deliverAudio(item) }
            })
            self.audioStage = audioStage
            let outputs = Self.makeOutputs(configuration, session: session, fanOut: fanOut, videoStage: videoStage, events: events)
            self.outputs = outputs

            // Started in data-flow order backwards, so the stop drains the pipeline from its sources.
            // All outputs (the program's and the ISO files) drain at the same time, so the whole stop is
            // bounded by one output's budget; each reports its last file closed (its row ends with its
            // size), and rows of an output that did not finish in time are ended here.
            services.start("outputs", { outputs.startConfigured(configuration, session: session) }, stop: {
                outputs.stopAll(with: cameras.cameraFeeds.map(\.output))
                do { try store.finishOpenRecordings() } catch { log.info("could not end the recordings' rows: \(error)") }
            })
            // The encoders' threads run from their making; stopping them sends end-of-stream downstream
            // (the ISO encoders between the program's video and audio). They share one stop budget
            // (`StopBudget`): each encodes what is queued until the deadline, drops the rest, and the
            // step returns at most a grace second after it, however slow the machine.
            services.add("encoders", stop: {
                let deadline = StopBudget.deadline()
                videoStage.finish(deadline: deadline)
                for feed in cameras.cameraFeeds { feed.stopEncoding(deadline: deadline) }
                audioStage.finish(deadline: deadline)
            })
            let programOrigin = ProgramOrigin()
            try services.start("cameras", {
                for discovery in try Self.discoveries(options, store: store, reloader: reloader, events: events, log: log, programOrigin: programOrigin) {
                    cameras.attach(discovery)
                }
            }, stop: { cameras.stop() })
            // The program opens on a picture rather than on a "waiting" slate where it can.
            cameras.waitForFirstFrames(seconds: 1)

            // The program's origin: video frame n and audio sample k are timed from here. It lies
            // `originLead` ahead, so every clock thread (the program's, the audio's, each ISO feed's) is
            // running and waiting for tick 0 when it comes, even on a loaded machine: a thread that
            // started late would begin at a later tick, and its file a few frames after the others.
            startedAt = Date(timeIntervalSinceNow: Self.originLead)
            startedMonotonic = MonotonicClock.now() + UInt64(Self.originLead * 1e9)
            let origin = startedMonotonic
            programOrigin.set(origin)
            let audioSource = configuration.audio.source(testCameras: options.testCameraCount > 0)
            let audio = ProgramAudio(source: audioSource, microphones: SourceBackends.microphoneDiscoveries(options.backends, for: audioSource,
                                                                                                           log: { log.info($0) }),
                                     settings: configuration.audio.inputSettings,
                                     master: configuration.audio.master, events: events, log: log,
                                     naming: Self.audioNaming(configuration.audio, store: store, log: log),
                                     deliver: { chunk in _ = audioStage.submit(chunk) })
            self.audio = audio
            AudioFollow.attach(audio, to: switcher, events: events, reloader: reloader)
            // The stingers' sound: an input while a loaded stinger has some, played from each sting's first frame.
            audio.follow(stingersOf: switcher)
            // A camera's own sound (a network stream's, a test backend's) is an input named like it.
            cameras.routeAudio(.init(attach: { audio.attach(sourceAudio: $0, of: $1) }, detach: { audio.detach(sourceAudioOf: $0) },
                                      remove: { audio.remove(sourceAudioOf: $0) }))
            services.start("switcher", { [switcher] in switcher.start(origin: origin) }, stop: { [switcher] in switcher.stop() })
            // Tally lights and displays (TSL UMD) and the vMix-compatible tally server, fed by the switcher's tally events.
            // A node with tally_from lights its cameras as its switcher does (read from the switcher's HTTP event stream).
            let switcherTally = Self.switcherTallyClient(configuration.node, log: log)
            tally = try Self.startTally(configuration.tally, pins: configuration.cameras.pins, switcher: switcher,
                                        following: SwitcherFollowing(switcherTally, node: configuration.node), router: router,
                                        events: events, services: services, log: log)
            // OSC control surfaces: the CLI's commands in, the tally and levels back to subscribers.
            osc = try Self.startOSC(configuration.osc, feed: tally.feed, audio: audio, router: router, services: services, log: log)
            // A node's cameras show the switcher's tally, read from its HTTP event stream on a thread of its own.
            self.switcherTally = switcherTally
            Self.startSwitcherTally(switcherTally, services: services)
            services.start("node-clock", { switcherClock?.start(waitingUpTo: 0.5) }, stop: { switcherClock?.stop() })
            services.start("tiles", { [switcher] in
                tiles.start(sources: Self.tileSources(switcher: switcher, cameras: cameras, scenes: sceneThumbnails))
            }, stop: { tiles.stop() })
            // Stopped once the audio has stopped (before the session ends).
            services.add("loudness", stop: { Self.keepLoudness(of: audio, in: store, log: log) })
            services.start("audio", { audio.start(origin: origin) }, stop: { audio.stop() })
            // Each ISO thread ticks on its camera's rate from the program's origin (one timeline); the
            // hub's silence watch starts with them. Both stop with the cameras.
            cameras.start(origin: origin)
            router.attach(self)
        } catch {
            services.stopAll()
            throw error
        }
        logStart()
    }

    /// Stops every service in the reverse of the order it started, which is data-flow order so nothing
    /// is lost: the audio source, switcher and cameras; the encoders (flushed, end-of-stream); the outputs
    /// (drained, trailers written, all at once); the session closed as `reason`; control, store, log.
    public func shutdown(reason: String = "stopped", signal: String? = nil) {
        log.info("stopping" + (signal.map { " on \($0)" } ?? ""))
        ending.reason = reason
        services.stopAll()
    }

    /// SIGHUP: re-reads the config file like `studio reload`; what happened goes to the log and the
    /// event store (`config_reloaded` or `config_reload_failed`).
    public func reload(by trigger: String) {
        _ = try? reloadConfiguration(by: trigger)
    }

    /// How far ahead of the clock threads' start the program's origin lies (seconds).
    static let originLead = 0.1

    var uptimeSeconds: Double {
        let now = MonotonicClock.now()
        return now > startedMonotonic ? Double(now - startedMonotonic) / 1e9 : 0
    }
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

/// How the session ends (`stopped`, or `error` when the server could not start), set by `shutdown`
/// before the services stop and read by the session's stop.
final class SessionEnding: Sendable {
    private let value = Mutex("error")
    var reason: String {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
