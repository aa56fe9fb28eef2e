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
    init(_ server: StudioServer? = nil) { reference.withLock { $0.server = server } }
    var server: StudioServer? { reference.withLock { $0.server } }
}

struct StudioServerReference: ~Copyable {
    weak var server: StudioServer?
}

/// The control commands, Voctomix style: each is a small function from a request to a reply (or, for
/// `switch`, a reply once the program has applied the cut).
final class CommandRouter: ControlHandler {
    private let box = Mutex<WeakServerBox?>(nil)
    var server: WeakServerBox? {
        get { box.withLock { $0 } }
        set { box.withLock { $0 = newValue } }
    }

    func handle(_ request: ControlRequest, reply: @escaping @Sendable (ControlReply) -> Void) {
        guard let server = server?.server else {
            reply(.failure(id: request.id, code: .unavailable, message: "the server is starting or stopping"))
            return
        }
        do {
            switch request.command {
            case "ping": reply(.success(id: request.id, result: .object(["pong": .bool(true)])))
            case "cameras": reply(.success(id: request.id, result: server.camerasView()))
            case "status": reply(.success(id: request.id, result: server.statusView()))
            case "sessions":
                let limit = request.arguments["limit"]?.intValue
                reply(.success(id: request.id, result: Views.sessions(try server.store.sessions(limit: limit))))
            case "log":
                reply(.success(id: request.id, result: try server.logView(session: request.arguments["session"]?.intValue.map(Int64.init))))
            case "switch":
                guard let name = request.arguments["camera"]?.stringValue, !name.isEmpty else {
                    reply(.failure(id: request.id, code: .badRequest, message: "switch needs a camera name, e.g. {\"camera\": \"cam2\"}"))
                    return
                }
                let id = request.id
                server.switcher.switchProgram(to: CameraID(name)) { result in
                    switch result {
                    case .success(let outcome):
                        reply(.success(id: id, result: .object([
                            "camera": .string(outcome.camera.name),
                            "previous": outcome.previous.map { .string($0.name) } ?? .null,
                            "program_ms": .number(Double(outcome.programTime.milliseconds)),
                            "frame": .number(Double(outcome.frameNumber)),
                        ])))
                    case .failure(let error):
                        reply(.failure(id: id, code: .unknownCamera, message: error.description))
                    }
                }
            default:
                reply(.failure(id: request.id, code: .unknownCommand,
                               message: "unknown command \"\(request.command)\"; commands: cameras, switch, status, sessions, log, subscribe, ping"))
            }
        } catch {
            reply(.failure(id: request.id, code: .internal, message: "\(error)"))
        }
    }
}

extension StudioServer {
    func camerasView() -> JSONValue {
        let program = switcher.status.programSource
        return .object(["cameras": .array(cameras.all.map { camera in
            let format: JSONValue = camera.currentFormat.map { format in
                .object([
                    "pixel_format": .string(format.pixelFormat.rawValue),
                    "width": .number(Double(format.width)),
                    "height": .number(Double(format.height)),
                    "fps": .number(format.frameRate.doubleValue),
                ])
            } ?? .null
            let statistics = camera.statistics
            return .object([
                "name": .string(camera.id.name),
                "backend": .string(camera.backend.rawValue),
                "identity": .string(camera.identity),
                "display_name": .string(camera.displayName),
                "state": .string(watch.isLost(camera.id) ? CameraState.lost.rawValue : camera.state.rawValue),
                "format": format,
                "on_program": .bool(camera.id == program),
                "frames": .number(Double(statistics.framesCaptured)),
            ])
        })])
    }

    func statusView() -> JSONValue {
        let program = switcher.status
        let video = videoStage.statistics
        let audio = audioStage.statistics
        return .object([
            "session": .number(Double(sessionID)),
            "started_at": .string(Views.timestamp(startedAt)),
            "uptime_s": .number((uptimeSeconds * 10).rounded() / 10),
            "program": .object([
                "source": program.programSource.map { .string($0.name) } ?? .null,
                "format": .string(options.program.description),
                "fps": .number((program.deliveredFPS * 10).rounded() / 10),
                "frames": .number(Double(program.framesDelivered)),
                "slate_frames": .number(Double(program.slateFrames)),
                "late_ticks": .number(Double(program.lateTicks)),
                "program_ms": .number(Double(MediaTime(count: program.frameNumber, rate: options.program.frameRate).milliseconds)),
            ]),
            "encoder": .object([
                "video": .string(video.encoderName),
                "preset": .string(options.preset),
                "bitrate": .number(Double(options.videoBitRate)),
                "frames_encoded": .number(Double(video.framesEncoded)),
                "frames_dropped": .number(Double(video.framesDropped)),
                "audio": .string(audio.encoderName),
            ]),
            "outputs": .array(outputs.map { output in
                let s = output.statistics
                return .object([
                    "name": .string(output.destination.name),
                    "url": .string(output.destination.maskedURL),
                    "state": .string(s.state.rawValue),
                    "bytes_sent": .number(Double(s.bytesSent)),
                    "dropped_video": .number(Double(s.droppedVideo)),
                    "dropped_audio": .number(Double(s.droppedAudio)),
                    "reconnects": .number(Double(s.reconnectCount)),
                    "last_error": s.lastError.map { .string($0) } ?? .null,
                ])
            }),
            "cameras": .number(Double(cameras.all.count)),
            "database": .string(options.databasePath),
        ])
    }

    func logView(session: Int64?) throws -> JSONValue {
        store.flush()
        guard let record = try store.session(id: session ?? sessionID) else {
            throw ServerError("no session \(session.map(String.init) ?? "")")
        }
        return Views.log(session: record, events: try store.events(sessionID: record.id))
    }
}
