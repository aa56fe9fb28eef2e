import Foundation
import StudioCore
import StudioSystem
import Capture
import Switcher
import Encoding
import Output
import EventStore
import Control

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
    let cameras: CameraSet
    let audioSource: TestToneSource
    let control: ControlServer
    let watch: CameraWatch
    let startedAt: Date
    let startedMonotonic: UInt64

    /// Opens the store, starts the session and every stage. Throws with a clear message when the
    /// database, recording directory, encoder or socket cannot be set up; nothing is left running then.
    public init(options: ServerOptions) throws {
        self.options = options
        Signals.ignoreSIGPIPE()
        let log = ServerLog()
        self.log = log

        let store: EventStore
        do { store = try EventStore(path: options.databasePath) } catch {
            log.close()
            throw ServerError("cannot open the database \(options.databasePath): \(error)")
        }
        let crashed = (try? store.recoverOrphanedSessions()) ?? []
        for id in crashed { log.info("session \(id) had not been closed: marked as crashed") }

        if let directory = options.recordDirectory {
            do { try RecordingDirectory.prepare(directory) } catch {
                store.close(); log.close()
                throw error
            }
        }

        // The control socket is claimed before the session starts, so a second server on the same
        // socket fails without leaving an empty session behind.
        let router = CommandRouter()
        let control: ControlServer
        do { control = try ControlServer(socketPath: options.socketPath, handler: router) } catch {
            store.close(); log.close()
            throw ServerError("cannot listen on \(options.socketPath): \(error)")
        }
        self.control = control

        sessionID = try store.startSession(configSnapshot: options.configSnapshot)
        self.store = store
        let events = ServerEventSink(store: store, control: control, log: log)
        self.events = events

        // Encoders first: the switcher and the audio source feed them.
        let fanOut = OutputFanOut()
        self.fanOut = fanOut
        let settings = VideoEncoderSettings(width: options.program.width, height: options.program.height,
                                            frameRate: options.program.frameRate, bitRate: options.videoBitRate,
                                            preset: options.preset, keyframeIntervalSeconds: options.keyframeIntervalSeconds)
        let videoEncoder = try makeEncoder(for: settings)
        videoStage = VideoEncodingStage(encoder: videoEncoder, events: events, deliver: { fanOut.deliver($0) })
        audioStage = AudioEncodingStage(encoder: try AACEncoder(format: .program, bitRate: options.audioBitRate),
                                        events: events, deliver: { fanOut.deliver($0) })

        var outputs: [MediaOutput] = []
        let videoStage = self.videoStage
        for (index, url) in options.rtmpURLs.enumerated() {
            let destination = OutputDestination(name: "rtmp\(index + 1)", url: url)
            outputs.append(MediaOutput(destination: destination, events: events, requestKeyframe: { videoStage.requestKeyframe() }))
        }
        if let directory = options.recordDirectory {
            let path = RecordingDirectory.programPath(in: directory, session: sessionID)
            outputs.append(MediaOutput(destination: OutputDestination(name: "recording", url: path),
                                       events: events, requestKeyframe: { videoStage.requestKeyframe() }))
            _ = try? store.addRecording(cameraID: nil, path: path)
        }
        self.outputs = outputs
        for output in outputs {
            fanOut.add(output)
            output.start()
        }

        switcher = ProgramSwitcher(format: options.program, events: events,
                                   deliver: { frame, pts in _ = videoStage.submit(frame, pts: pts) })
        router.server = WeakServerBox()

        cameras = CameraSet()
        for index in 0..<options.testCameraCount {
            let identity = "test-pattern:\(index + 1)"
            let name = try store.cameraName(forIdentity: identity, backend: .testPattern,
                                            displayName: "Test pattern \(index + 1)",
                                            pinnedName: options.pinnedNames[identity])
            let camera = TestPatternCamera(id: name, identity: identity, index: index)
            cameras.add(camera)
        }

        startedAt = Date()
        startedMonotonic = MonotonicClock.now()
        let origin = startedMonotonic
        let audioStage = self.audioStage
        audioSource = TestToneSource(kind: options.audio == .tone ? .tone : .silence, origin: origin,
                                     deliver: { chunk in _ = audioStage.submit(chunk) })
        watch = CameraWatch(cameras: cameras, events: events, lossTimeoutSeconds: options.cameraLossTimeoutSeconds)

        for camera in cameras.all {
            camera.start()
            switcher.addSource(camera.id, frames: camera.frames)
            events.emit(StudioEvent(kind: .cameraAdded, camera: camera.id,
                                    details: ["backend": camera.backend.rawValue, "identity": camera.identity]))
        }
        switcher.start(origin: origin)
        audioSource.start()
        watch.start()
        router.server = WeakServerBox(self)
        control.start()
        log.info("session \(sessionID) started: program \(options.program), \(cameras.all.count) camera(s), control socket \(options.socketPath)")
        for output in outputs { log.info("output \(output.destination.name): \(output.destination.maskedURL)") }
    }

    /// Stops every stage in data-flow order so nothing is lost: sources, switcher, encoders (flushed,
    /// end-of-stream), outputs (drained, trailers written), then the session is closed in the store.
    public func shutdown(reason: String = "stopped") {
        log.info("stopping (\(reason))")
        watch.stop()
        audioSource.stop()
        switcher.stop()
        for camera in cameras.all { camera.stop() }
        videoStage.finish()
        audioStage.finish()
        for output in outputs { output.stop(timeoutSeconds: 5) }
        control.stop()
        do { try store.endSession(reason: reason) } catch { log.info("could not close the session: \(error)") }
        store.close()
        log.info("session \(sessionID) ended")
        log.close()
    }

    var uptimeSeconds: Double { Double(MonotonicClock.now() - startedMonotonic) / 1e9 }
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
}
