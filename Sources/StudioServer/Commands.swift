import Foundation
import Synchronization
import StudioCore
import StudioSystem
import Capture
import Switcher
import Encoding
import Output
import EventStore
import Control

/// Holds the server weakly: the control server is created before the server is complete, and the
/// server owns the control server.
final class WeakServerBox: Sendable {
    private let reference = Mutex<StudioServerReference>(StudioServerReference())
    init() {}
    var server: StudioServer? {
        get { reference.withLock { $0.server } }
        set { reference.withLock { $0.server = newValue } }
    }
}

struct StudioServerReference: ~Copyable {
    weak var server: StudioServer?
}

/// The control commands, Voctomix style: each is a small function from a request to a reply (or, for
/// `switch`, a reply once the program has applied the cut). Store queries run on the store's thread;
/// the control thread waits for them, which is fine for the control plane (never the media path).
enum ServerCommands {
    static func makeRouter(_ box: WeakServerBox, queries: QueryWorker) -> ControlRouter {
        let router = ControlRouter()
        @Sendable func server() throws(ControlError) -> StudioServer {
            guard let server = box.server else { throw ControlError(.unavailable, "the server is starting or stopping") }
            return server
        }
        router.add("ping") { _ in .success(["pong": true]) }
        router.add("cameras") { _ in .success(try server().camerasView()) }
        router.add("status") { _ in .success(try server().statusView()) }
        /// Runs `query` on the query worker and replies from there.
        @Sendable func deferred(_ reply: @escaping @Sendable (ControlReply) -> Void,
                                _ query: @escaping @Sendable () throws -> JSONValue) throws {
            let accepted = queries.submit {
                do { reply(.success(try query())) } catch let error as ControlError {
                    reply(.failure(error))
                } catch {
                    reply(.failure(.internal, "\(error)"))
                }
            }
            if !accepted { throw ControlError(.busy, "too many queries waiting; try again") }
        }
        router.addDeferred("sessions") { request, reply in
            let limit = try request.optionalInt("limit")
            let server = try server()
            try deferred(reply) { Views.sessions(try server.store.sessions(limit: limit)) }
        }
        router.addDeferred("log") { request, reply in
            let session = try request.optionalInt("session").map(Int64.init)
            let server = try server()
            try deferred(reply) { try server.logView(session: session) }
        }
        router.addDeferred("recordings") { request, reply in
            let session = try request.optionalInt("session").map(Int64.init)
            let server = try server()
            try deferred(reply) { try server.recordingsView(session: session) }
        }
        router.addDeferred("switch") { request, reply in
            let name = try request.string("camera")
            try server().switcher.switchProgram(to: CameraID(name)) { result in
                switch result {
                case .success(let outcome):
                    reply(.success([
                        "camera": .string(outcome.camera.name),
                        "previous": outcome.previous.map { .string($0.name) } ?? .null,
                        "program_ms": .int(Int(outcome.programTime.milliseconds)),
                        "frame": .int(Int(outcome.frameNumber)),
                    ]))
                case .failure(let error):
                    reply(.failure(.unknownCamera, error.description))
                }
            }
        }
        CameraCommands.register(on: router, server: server, deferred: deferred)
        return router
    }
}

extension StudioServer {
    func camerasView() -> JSONValue {
        let program = switcher.status.programSource
        let list: [JSONValue] = cameras.all.map { camera in
            var format = JSONValue.null
            if let current = camera.currentFormat {
                format = .object([
                    "pixel_format": .string(current.pixelFormat.rawValue),
                    "width": .int(current.width),
                    "height": .int(current.height),
                    "fps": .number(current.frameRate.doubleValue),
                ])
            }
            let lostReason = cameras.lostReason(camera.id)
            let state = lostReason != nil ? CameraState.lost : camera.state
            var members: [String: JSONValue] = [:]
            members["name"] = .string(camera.id.name)
            members["backend"] = .string(camera.backend.rawValue)
            members["identity"] = .string(camera.identity)
            members["display_name"] = .string(camera.displayName)
            members["state"] = .string(state.rawValue)
            members["format"] = format
            members["on_program"] = .bool(camera.id == program)
            members["lost_reason"] = Views.optional(lostReason)
            let statistics = camera.statistics
            members["frames"] = .int(Int(statistics.framesCaptured))
            members["frames_dropped"] = .int(Int(statistics.framesDropped))
            members["frames_corrupt"] = .int(Int(statistics.framesCorrupt))
            members["offered_modes"] = .array(camera.offeredModes.map { mode in
                var members: [String: JSONValue] = [
                    "format": .string(mode.format), "width": .int(mode.width), "height": .int(mode.height),
                    "fps": .array(mode.frameRates.map { .number($0.doubleValue) }),
                ]
                if let range = mode.rateRange { members["fps_range"] = .array([.number(range.lowerBound), .number(range.upperBound)]) }
                return .object(members)
            })
            return .object(members)
        }
        return .object(["cameras": .array(list)])
    }

    func statusView() -> JSONValue {
        let program = switcher.status
        let video = videoStage.statistics
        let audio = audioStage.statistics
        let programTime = MediaTime(count: max(program.frameNumber, 0), rate: options.program.frameRate)

        var programView: [String: JSONValue] = [:]
        programView["source"] = Views.optional(program.programSource?.name)
        programView["slate"] = Views.optional(program.slate)
        programView["format"] = .string(options.program.description)
        programView["fps"] = .number((program.deliveredFPS * 10).rounded() / 10)
        programView["frames"] = .int(Int(program.framesDelivered))
        programView["slate_frames"] = .int(Int(program.slateFrames))
        programView["late_ticks"] = .int(Int(program.lateTicks))
        programView["program_ms"] = .int(Int(programTime.milliseconds))

        var encoderView: [String: JSONValue] = [:]
        encoderView["video"] = .string(video.encoderName)
        encoderView["generation"] = .int(video.generation)
        encoderView["choice"] = .string(options.configuration.video.encoder.rawValue)
        encoderView["fallback_reason"] = Views.optional(encoderChoiceReason)
        encoderView["preset"] = .string(options.configuration.video.preset)
        encoderView["bitrate"] = .int(options.configuration.video.bitRate)
        encoderView["frames_encoded"] = .int(video.framesIn)
        encoderView["frames_dropped"] = .int(video.framesDropped)
        encoderView["encode_errors"] = .int(video.encodeErrors)
        encoderView["audio"] = .string(audio.encoderName)

        let outputViews: [JSONValue] = outputs.map { output in
            let s = output.statistics
            var members: [String: JSONValue] = [:]
            members["name"] = .string(s.name)
            members["url"] = .string(s.maskedURL)
            members["state"] = .string(s.state.rawValue)
            members["bytes_sent"] = .int(Int(s.bytesSent))
            members["packets_sent"] = .int(s.packetsSent)
            members["dropped_video"] = .int(s.droppedVideo)
            members["dropped_audio"] = .int(s.droppedAudio)
            members["reconnects"] = .int(s.reconnectCount)
            members["last_error"] = Views.optional(s.lastError)
            return .object(members)
        }

        let isoViews: [JSONValue] = cameras.isoRecorders.map { iso in
            let s = iso.statistics
            let out = iso.output.statistics
            var members: [String: JSONValue] = [:]
            members["camera"] = .string(s.camera.name)
            members["path"] = .string(s.path)
            members["encoder"] = .string(s.encoderName)
            members["fallback_reason"] = Views.optional(s.fallbackReason)
            members["generation"] = .int(s.generation)
            members["preset"] = .string(options.configuration.cameras.isoPreset)
            members["size"] = s.width > 0 ? .string("\(s.width)x\(s.height)") : .null
            members["frames_encoded"] = .int(s.framesEncoded)
            members["frames_skipped"] = .int(s.framesSkipped)
            members["frames_unusable"] = .int(s.framesUnusable)
            members["encode_errors"] = .int(s.encodeErrors)
            members["state"] = .string(out.state.rawValue)
            members["bytes_written"] = .int(Int(out.bytesSent))
            return .object(members)
        }

        // Where the program audio comes from; a microphone says which node it has and how it is doing.
        var audioInput: [String: JSONValue] = ["source": .string(options.configuration.audio.source.description)]
        if let microphone = audioSource as? PipeWireMicrophone {
            let mic = microphone.status, rate = Double(microphone.format.sampleRate)
            audioInput["node"] = Views.optional(mic.node)
            // The default microphone: what the daemon's default.audio.source metadata names (it follows it).
            if microphone.nodeName == nil { audioInput["default_node"] = Views.optional(mic.defaultNode) }
            audioInput["state"] = .string(mic.streamState)
            audioInput["connections"] = .int(mic.connections)
            audioInput["captured_s"] = .number((Double(mic.framesCaptured) / rate * 10).rounded() / 10)
            audioInput["silence_s"] = .number((Double(mic.framesDelivered - mic.framesCaptured) / rate * 10).rounded() / 10)
            audioInput["discarded_samples"] = .int(Int(mic.framesDiscarded))
        }

        var members: [String: JSONValue] = [:]
        members["session"] = .int(Int(sessionID))
        members["audio_input"] = .object(audioInput)
        members["started_at"] = .string(Views.timestamp(startedAt))
        members["uptime_s"] = .number((uptimeSeconds * 10).rounded() / 10)
        members["program"] = .object(programView)
        members["encoder"] = .object(encoderView)
        members["outputs"] = .array(outputViews)
        members["iso"] = .array(isoViews)
        let all = cameras.all
        members["cameras"] = .int(all.count)
        members["cameras_lost"] = .int(all.filter { cameras.isLost($0.id) }.count)
        members["database"] = .string(options.databasePath)
        return .object(members)
    }

    func recordingsView(session: Int64?) throws -> JSONValue {
        guard let record = try store.session(id: session ?? sessionID) else {
            throw ControlError(.notFound, "no session \(session.map(String.init) ?? "") in the database")
        }
        return Views.recordings(session: record, recordings: try store.recordings(sessionID: record.id))
    }

    func logView(session: Int64?) throws -> JSONValue {
        guard let record = try store.session(id: session ?? sessionID) else {
            throw ControlError(.notFound, "no session \(session.map(String.init) ?? "") in the database")
        }
        return Views.log(session: record, events: try store.events(sessionID: record.id))
    }
}
