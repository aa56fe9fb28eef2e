import Foundation
import StudioCore
import IsoRecording
import Capture
import Control

/// `camera` (mode: size and rate), `controls`, `control` and `focus`: the operator's handles on a device camera
/// (any `AdjustableCamera`; the server never sees a backend's types), or a node camera's, forwarded to its
/// node (`NodeForwarding`). They run on the query worker, not the control thread: a mode change waits
/// for the capture thread to restart its stream, a forwarded one for the node's answer.
enum CameraCommands {
    enum Mode: SignedCommand {
        typealias Signature = CameraSignatures.Mode
        static let execution = ControlExecution.worker

        static func run(_ arguments: CameraModeArguments, in server: StudioServer) throws -> CameraModeReply {
            var mode = CameraModeRequest()
            if let size = arguments.size {
                let parts = size.lowercased().split(separator: "x")
                guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0 else {
                    throw ControlError(.invalidArgument, "camera: size \"\(size)\" is not WIDTHxHEIGHT (e.g. 1280x720)")
                }
                (mode.width, mode.height) = (width, height)
            }
            if let fps = arguments.fps {
                guard let rate = Rational(parsingRate: fps) else {
                    throw ControlError(.invalidArgument, "camera: fps \"\(fps)\" is not a frame rate (e.g. 30, 29.97, 30000/1001)")
                }
                mode.frameRate = rate
            }
            if let node = try NodeForwarding.of(arguments.camera, in: server) {
                var forwarded = arguments
                forwarded.camera = node.nodeCamera.name
                var view = try node.forward(Signature.self, forwarded)
                view.camera = arguments.camera
                if mode.width != nil || mode.frameRate != nil {
                    changed(view, on: node.camera, details: node.noted, in: server)
                    server.log.info("\(node.camera.name): asked node \(node.node.name) for \(mode), it granted \(view.granted.map(grantedText) ?? "nothing")")
                }
                return view
            }
            let camera = try adjustable(server, arguments.camera)
            guard mode.width != nil || mode.frameRate != nil else { return modeView(camera, camera.currentFormat) }
            let granted: CameraFormat
            do { granted = try camera.setMode(mode) } catch { throw ControlError(.invalidArgument, "\(error)") }
            server.log.info("\(camera.id.name): asked for \(mode), the device granted \(granted)")
            var view = modeView(camera, granted)
            view.requested = mode.description
            let iso = server.cameras.isoRecorders.first { $0.cameraID == camera.id }
            iso?.cameraModeChanged()
            view.warning = IsoMode.warning(afterModeChangeOf: camera.id, sendsCompressed: camera.sendsCompressedFrames, iso: iso?.mode)
            if let warning = view.warning { server.log.info("warning: \(warning)") }
            changed(view, on: camera.id, in: server)
            return view
        }

        /// `camera_mode_changed`, from the reply (a local camera's or a node's).
        private static func changed(_ view: CameraModeReply, on camera: CameraID, details noted: ([String: String]) -> [String: String] = { $0 },
                                    in server: StudioServer) {
            var details = ["requested": view.requested ?? "no change"]
            details["granted"] = view.granted.map(grantedText)
            details["pixel_format"] = view.granted?.pixelFormat
            server.events.emit(StudioEvent(kind: .cameraModeChanged, camera: camera, details: noted(details)))
        }

        private static func grantedText(_ mode: CameraModeReply.GrantedMode) -> String { "\(mode.width)x\(mode.height)@\(mode.fpsText)" }
    }

    enum Controls: SignedCommand {
        typealias Signature = CameraSignatures.Controls
        static let execution = ControlExecution.worker
        static func run(_ arguments: CameraArguments, in server: StudioServer) throws -> ControlsReply {
            if let node = try NodeForwarding.of(arguments.camera, in: server) {
                var reply = try node.forward(Signature.self, CameraArguments(camera: node.nodeCamera.name))
                reply.camera = arguments.camera
                return reply
            }
            let camera = try adjustable(server, arguments.camera)
            let controls: [CameraControl]
            do { controls = try camera.controls() } catch { throw ControlError(.unavailable, "\(error)") }
            return ControlsReply(camera: camera.id.name, controls: controls.map(CameraControlView.init))
        }
    }

    enum SetControl: SignedCommand {
        typealias Signature = CameraSignatures.SetControl
        static let execution = ControlExecution.worker

        static func run(_ arguments: SetControlArguments, in server: StudioServer) throws -> ControlSetReply {
            if let node = try NodeForwarding.of(arguments.camera, in: server) {
                var forwarded = arguments
                forwarded.camera = node.nodeCamera.name
                var reply = try node.forward(Signature.self, forwarded)
                reply.camera = arguments.camera
                changed(reply, asked: arguments.value, previous: nil, on: node.camera, details: node.noted(_:), in: server)
                return reply
            }
            let camera = try adjustable(server, arguments.camera)
            let (name, value) = (arguments.name, arguments.value)
            let previous = (try? camera.controls())?.first { $0.name == name }?.valueText
            let control: CameraControl
            do { control = try camera.setControl(name, to: value) } catch { throw ControlError(.invalidArgument, "\(error)") }
            let reply = ControlSetReply(camera: camera.id.name, control: CameraControlView(control))
            changed(reply, asked: value, previous: previous, on: camera.id, in: server)
            return reply
        }

        /// `camera_control_changed`, from the reply (a local camera's or a node's).
        private static func changed(_ reply: ControlSetReply, asked value: String, previous: String?, on camera: CameraID,
                                    details noted: ([String: String]) -> [String: String] = { $0 }, in server: StudioServer) {
            var details = ["control": reply.control.name, "value": reply.control.valueText ?? value]
            details["previous"] = previous
            server.events.emit(StudioEvent(kind: .cameraControlChanged, camera: camera, details: noted(details)))
        }
    }

    enum Focus: SignedCommand {
        typealias Signature = CameraSignatures.Focus
        static let execution = ControlExecution.worker

        static func run(_ arguments: FocusArguments, in server: StudioServer) throws -> FocusReply {
            guard let point = FocusPoint(x: arguments.x, y: arguments.y) else {
                throw ControlError(.invalidArgument, "focus: x and y are fractions of the picture from 0 to 1 (0 0 top left, 0.5 0.5 the centre), "
                                   + "got x \(arguments.x), y \(arguments.y)")
            }
            if let node = try NodeForwarding.of(arguments.camera, in: server) {
                var reply = try node.forward(Signature.self, FocusArguments(camera: node.nodeCamera.name, x: point.x, y: point.y))
                reply.camera = arguments.camera
                focused(reply, on: node.camera, details: node.noted(_:), in: server)
                return reply
            }
            let camera = try present(server, arguments.camera)
            let outcome: FocusOutcome
            if let adjustable = camera as? any AdjustableCamera {
                do { outcome = try adjustable.focus(at: point) } catch { throw ControlError(.unavailable, "\(error)") }
            } else {
                outcome = FocusOutcome(method: .none, reason: "\(camera.id.name) is a \(camera.backend.rawValue) camera: it has no focus or exposure controls")
            }
            let reply = FocusReply(camera: camera.id.name, x: point.x, y: point.y, method: outcome.method.rawValue, exposure: outcome.exposure,
                                   region: outcome.region, reason: outcome.reason)
            focused(reply, on: camera.id, in: server)
            return reply
        }

        /// `camera_focus` and its log line, from the reply (a local camera's or a node's).
        private static func focused(_ reply: FocusReply, on camera: CameraID, details noted: ([String: String]) -> [String: String] = { $0 },
                                    in server: StudioServer) {
            var details = ["x": "\(reply.x)", "y": "\(reply.y)", "method": reply.method]
            details["exposure"] = reply.exposure
            details["region"] = reply.region.map { $0.map(String.init).joined(separator: ",") }
            details["reason"] = reply.reason
            let noted = noted(details)
            server.events.emit(StudioEvent(kind: .cameraFocus, camera: camera, details: noted))
            server.log.info("\(camera.name): focus on (\(reply.x), \(reply.y)): \(reply.method)\(reply.reason.map { " (\($0))" } ?? "")"
                            + (noted["node"].map { " on node \($0)" } ?? ""))
        }
    }

    /// Camera `name`, present now: `unknown_camera` or `unavailable` (lost) otherwise.
    private static func present(_ server: StudioServer, _ name: String) throws(ControlError) -> any Camera {
        guard let camera = server.cameras.camera(named: CameraID(name)) else {
            throw ControlError(.unknownCamera, "no camera named \(name) (see `studio cameras`)")
        }
        guard server.cameras.isPresent(camera.id) else {
            throw ControlError(.unavailable, "\(name) is lost (\(server.cameras.lostReason(camera.id) ?? "not present")); it comes back by itself")
        }
        return camera
    }

    private static func adjustable(_ server: StudioServer, _ name: String) throws(ControlError) -> any AdjustableCamera {
        let camera = try present(server, name)
        guard let adjustable = camera as? any AdjustableCamera else {
            throw ControlError(.invalidArgument, "\(name) is a \(camera.backend.rawValue) camera: it has no adjustable mode or controls")
        }
        return adjustable
    }

    private static func modeView(_ camera: any Camera, _ format: CameraFormat?) -> CameraModeReply {
        CameraModeReply(camera: camera.id.name, granted: format.map {
            CameraModeReply.GrantedMode(pixelFormat: $0.pixelFormat.rawValue, width: $0.width, height: $0.height,
                                        fps: $0.frameRate.doubleValue, fpsText: $0.frameRate.description)
        })
    }
}

extension CameraControlView {
    init(_ control: CameraControl) {
        self.init(name: control.name, label: control.label, type: control.kind.rawValue, min: Double(control.minimum),
                  max: Double(control.maximum), step: Double(control.step), default: Double(control.defaultValue),
                  value: control.value.map { Double($0) }, valueText: control.valueText,
                  menu: control.menu.isEmpty ? nil : control.menu.map { MenuItem(index: Double($0.index), name: $0.name) },
                  readOnly: control.isReadOnly, inactive: control.isInactive, summary: control.summary)
    }
}
