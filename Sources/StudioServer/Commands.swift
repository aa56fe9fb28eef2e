import Foundation
import StudioCore
import IsoRecording
import Capture
import EventStore
import Control
import StudioSystem

/// The studio server's control commands, Voctomix style: each is declared once, as a type with its
/// name, summary, arguments and reply, and listed in `ServerCommands.all`, from which the router,
/// `help` and the unknown-command message come (docs/control-protocol.md lists the same, checked by a
/// test). Store queries and camera calls run on the query worker, never on the control thread.
enum ServerCommands {
    /// Every command, in the order `help` lists them.
    static var all: [any ControlCommand<StudioServer>.Type] {
        [Ping.self, Cameras.self, SwitcherCommands.Switch.self, SwitcherCommands.Preview.self, SwitcherCommands.Cut.self,
         SwitcherCommands.Auto.self, SwitcherCommands.Transition.self, SwitcherCommands.Scene.self, SwitcherCommands.Scenes.self,
         SwitcherCommands.Overlay.self,
         Status.self, OutputCommands.Outputs.self, OutputCommands.Output.self, Levels.self, AudioCommands.Audio.self, Metrics.self, ShowTopology.self, Reload.self, Sessions.self, Log.self, OnAir.self, Report.self, Recordings.self, Prune.self,
         CameraCommands.Mode.self, CameraCommands.Controls.self, CameraCommands.SetControl.self, CameraCommands.Focus.self,
         PictureCommands.Picture.self,
         PlayerCommands.Play.self, PlayerCommands.Pause.self, PlayerCommands.Stop.self, PlayerCommands.Cue.self, PlayerCommands.Seek.self, PlayerCommands.Next.self]
    }

    static func makeRouter(queries: QueryWorker) -> ControlRouter<StudioServer> {
        ControlRouter(commands: all, worker: queries.submit)
    }

    enum Ping: SignedCommand {
        typealias Signature = CameraSignatures.Ping
        static func run(_ arguments: NoArguments, in server: StudioServer) -> PingReply { PingReply() }
    }

    enum Cameras: SignedCommand {
        typealias Signature = CameraSignatures.Cameras
        static func run(_ arguments: NoArguments, in server: StudioServer) -> CamerasReply { server.camerasView() }
    }

    enum Status: SignedCommand {
        typealias Signature = StatusSignatures.Status
        static func run(_ arguments: NoArguments, in server: StudioServer) -> StatusReply { server.statusView() }
    }

    enum Levels: SignedCommand {
        typealias Signature = StatusSignatures.Levels
        static func run(_ arguments: NoArguments, in server: StudioServer) -> LevelsReply { LevelsReply(server.audioStage.levels) }
    }

    enum Metrics: SignedCommand {
        typealias Signature = StatusSignatures.Metrics
        static func run(_ arguments: NoArguments, in server: StudioServer) -> MetricsReply { MetricsReply(text: server.metricsText()) }
    }

    /// Named so, not `Topology`, which is the graph's own type.
    enum ShowTopology: SignedCommand {
        typealias Signature = StatusSignatures.Topology
        static func run(_ arguments: NoArguments, in server: StudioServer) -> TopologyReply { server.topology.reply }
    }

    enum Sessions: SignedCommand {
        typealias Signature = HistorySignatures.Sessions
        static let execution = ControlExecution.worker
        static func run(_ arguments: SessionsArguments, in server: StudioServer) throws -> SessionsReply {
            try History.sessions(arguments, store: server.store)
        }
    }

    enum Log: SignedCommand {
        typealias Signature = HistorySignatures.Log
        static let execution = ControlExecution.worker
        static func run(_ arguments: LogArguments, in server: StudioServer) throws -> LogReply {
            try History.log(arguments, store: server.store, defaultSession: server.currentStoredSessionID)
        }
    }

    enum OnAir: SignedCommand {
        typealias Signature = HistorySignatures.OnAir
        static let execution = ControlExecution.worker
        static func run(_ arguments: OnAirArguments, in server: StudioServer) throws -> OnAirReply {
            try History.onAir(arguments, store: server.store, defaultSession: server.currentStoredSessionID)
        }
    }

    enum Report: SignedCommand {
        typealias Signature = HistorySignatures.Report
        static let execution = ControlExecution.worker
        static func run(_ arguments: ReportArguments, in server: StudioServer) throws -> ReportReply {
            try History.report(arguments, store: server.store, defaultSession: server.currentStoredSessionID)
        }
    }

    enum Prune: SignedCommand {
        typealias Signature = HistorySignatures.Prune
        static let execution = ControlExecution.worker
        static func run(_ arguments: PruneArguments, in server: StudioServer) throws -> PruneReply {
            try Retention.prune(arguments, store: server.store)
        }
    }

    enum Recordings: SignedCommand {
        typealias Signature = HistorySignatures.Recordings
        static let execution = ControlExecution.worker
        static func run(_ arguments: SessionArguments, in server: StudioServer) throws -> RecordingsReply {
            let session = try server.storedSession(arguments.session)
            return try RecordingsReply(session: session, store: server.store)
        }
    }
}

extension StudioServer {
    /// The store's own session, which continues `sessionID` in a new file if the database was replaced.
    var currentStoredSessionID: Int64? { store.currentSessionID ?? sessionID }

    /// Session `id` (the current one when nil) from the store; `not_found` saying which exist when there is none.
    func storedSession(_ id: Int64?) throws -> SessionRecord {
        try History.session(id, store: store, defaultSession: currentStoredSessionID)
    }

    func camerasView() -> CamerasReply {
        let status = switcher.status
        let program = status.programSource
        return CamerasReply(cameras: cameras.all.map { camera in
            let lostReason = cameras.lostReason(camera.id)
            let statistics = camera.statistics
            return CameraView(
                name: camera.id.name, backend: camera.backend.rawValue, identity: camera.identity,
                displayName: camera.displayName, state: (lostReason != nil ? CameraState.lost : camera.state).rawValue,
                format: camera.currentFormat.map {
                    CameraView.FormatView(pixelFormat: $0.pixelFormat.rawValue, width: $0.width, height: $0.height,
                                          fps: $0.frameRate.doubleValue)
                },
                onProgram: camera.id == program, tally: status.tally[camera.id.name]?.rawValue,
                switcherTally: switcherTally(of: camera.id)?.rawValue, lostReason: lostReason,
                frames: Int(statistics.framesCaptured), framesDropped: Int(statistics.framesDropped),
                framesCorrupt: Int(statistics.framesCorrupt),
                offeredModes: camera.offeredModes.map { mode in
                    CameraView.OfferedModeView(format: mode.format, width: mode.width, height: mode.height,
                                               fps: mode.frameRates.map(\.doubleValue),
                                               fpsRange: mode.rateRange.map { [$0.lowerBound, $0.upperBound] })
                },
                decode: camera.demand.map {
                    CameraView.DecodeView(demand: $0.demand.rawValue, full: Int(statistics.framesDecodedFull),
                                          reduced: Int(statistics.framesDecodedReduced), skipped: Int(statistics.framesNotDecoded))
                },
                network: camera.network, player: camera.player)
        }, switcherClock: switcherClockStatus)
    }

    /// What `metrics` answers and the HTTP console serves at `/metrics`.
    public func metricsText() -> String {
        Metrics.render(status: statusView(), cameras: camerasView(), tiles: TileMetrics(counters: tiles.counters, requests: tileRequests.byRoute),
                       http: http.map(HTTPMetrics.init)) + tally.metricsText + (osc?.metricsText ?? "")
    }

    /// A latency budget as replies give it: by stage name.
    static func latencyView(_ latency: [LatencyStage: LatencyQuantiles]) -> [String: LatencyQuantiles] {
        Dictionary(uniqueKeysWithValues: latency.map { ($0.key.rawValue, $0.value) })
    }

    func statusView() -> StatusReply {
        let program = switcher.status
        let video = videoStage.statistics
        let audio = audioStage.statistics
        let programTime = MediaTime(count: max(program.frameNumber, 0), rate: options.program.frameRate)
        let configuration = options.configuration
        func tenths(_ value: Double) -> Double { (value * 10).rounded() / 10 }

        var programView = StatusReply.ProgramView(
            source: program.program?.name, sourceKind: program.program.map { $0.camera == nil ? "scene" : "camera" },
            preview: program.preview?.name,
            transition: program.transition.map {
                StatusReply.ProgramView.TransitionView(kind: $0.kind.rawValue, frames: $0.frames, shown: $0.shown, from: $0.from, to: $0.to)
            },
            defaultTransition: TransitionReply(program.defaultTransition, rate: options.program.frameRate),
            tally: program.tally.mapValues(\.rawValue), slate: program.slate, backup: program.backup.map(StatusReply.ProgramView.BackupView.init),
            format: options.program.description,
            fps: tenths(program.deliveredFPS), frames: Int(program.framesDelivered), slateFrames: Int(program.slateFrames),
            composedFrames: Int(program.composedFrames), transitionFrames: Int(program.transitionFrames),
            lateTicks: Int(program.lateTicks), reducedFrames: Int(program.reducedFrames), heldTicks: Int(program.heldTicks), programMilliseconds: programTime.milliseconds, overlays: program.overlays.map { StatusReply.ProgramView.OverlayView(name: $0.name, on: $0.on) })
        programView.pictures = program.pictures
        let encoderView = StatusReply.EncoderView(
            video: video.encoderName, generation: video.generation, choice: configuration.video.encoder.rawValue,
            fallbackReason: encoderChoiceReason, preset: configuration.video.preset, bitrate: configuration.video.bitRate,
            framesEncoded: video.framesIn, framesDropped: video.framesDropped, encodeErrors: video.encodeErrors,
            overloadedFPS: video.overload.map { tenths($0.measuredFPS) }, probeFPS: startSpeed.map { tenths($0.measuredFPS) },
            audio: audio.encoderName)
        let outputViews = outputs.entries.map(outputView)
        let isoViews = cameras.isoRecorders.map { isoView($0) }
        let senderViews = cameras.senders.map { sender in
            var feed = isoView(sender)
            feed.path = sender.output.statistics.maskedURL
            return SenderView(camera: sender.cameraID.name, streamID: configuration.node?.streamID(of: sender.cameraID) ?? sender.cameraID.name,
                              feed: feed, output: outputView(sender.output))
        }

        // Where the program audio comes from; a single microphone (`pipewire`, `pipewire:NODE`) says
        // which node it has and how it is doing.
        var audioInput = StatusReply.AudioInputView(source: self.audio.source.description)
        if case .pipewire = self.audio.source, let name = self.audio.inputs.first?.name, let mic = self.audio.status[name] {
            let rate = Double(self.audio.format.sampleRate)
            audioInput.node = Nullable(wrappedValue: mic.node)
            // The default microphone: what the daemon's default.audio.source metadata names (it follows it).
            if self.audio.source == .pipewire(node: "") { audioInput.defaultNode = Nullable(wrappedValue: mic.defaultNode) }
            audioInput.state = mic.streamState
            audioInput.connections = mic.connections
            audioInput.capturedSeconds = tenths(Double(mic.framesCaptured) / rate)
            audioInput.silenceSeconds = tenths(Double(mic.framesDelivered - mic.framesCaptured) / rate)
            audioInput.discardedSamples = Int(mic.framesDiscarded)
        }

        let all = cameras.all
        return StatusReply(
            session: store.currentSessionID ?? sessionID, startedAt: startedAt, uptimeSeconds: tenths(uptimeSeconds), program: programView,
            encoder: encoderView, outputs: outputViews, iso: isoViews, cameras: all.count,
            camerasLost: all.filter { cameras.isLost($0.id) }.count, audioInput: audioInput,
            audio: StatusReply.AudioView(levels: LevelsReply(audioStage.levels), mixer: audioView()), database: options.databasePath,
            store: StatusReply.StoreView(store.statistics),
            disk: options.configuration.recordDirectory.map { StatusReply.DiskView(path: $0, freeBytes: FreeSpace.bytes(atPath: $0)) },
            players: Dictionary(all.compactMap { camera in camera.player.map { (camera.id.name, $0) } }) { first, _ in first },
            switcherClock: switcherClockStatus, senders: senderViews)
    }

    /// An ISO feed as `status` gives it (a node's sender's feed too).
    func isoView(_ iso: IsoRecorder) -> StatusReply.IsoView {
        let s = iso.statistics, output = iso.output.statistics
        return StatusReply.IsoView(
            camera: s.camera.name, path: s.path, mode: s.mode.rawValue, codec: s.codec, encoder: s.encoderName, fallbackReason: s.fallbackReason,
            generation: s.generation, preset: options.configuration.cameras.isoPreset,
            size: s.width > 0 ? "\(s.width)x\(s.height)" : nil, framesEncoded: s.framesEncoded,
            framesSkipped: s.framesSkipped, framesUnusable: s.framesUnusable, encodeErrors: s.encodeErrors, soundPackets: s.soundPackets,
            state: output.state.rawValue, bytesWritten: Int(output.bytesSent), latency: Self.latencyView(output.latency))
    }
}
