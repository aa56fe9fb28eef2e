import Foundation
import StudioCore
import IsoRecording
import Capture
import Control

/// `camera` (mode: size and rate), `controls`, `control` and `focus`: the operator's handles on a device camera
/// (any `AdjustableCamera`; the server never sees a backend's types). They run on the query worker,
/// not the control thread: a mode change waits for the capture thread to restart its stream.
enum CameraCommands {
    enum Mode: SignedCommand {
        typealias Signature = CameraSignatures.Mode
        static let execution = ControlExecution.worker

        static func run(_ arguments: CameraModeArguments, in server: StudioServer) throws -> CameraModeReply {
            let camera = try adjustable(server, arguments.camera)
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
            guard mode.width != nil || mode.frameRate != nil else { return modeView(camera, camera.currentFormat) }
            let granted: CameraFormat
            do { granted = try camera.setMode(mode) } catch { throw ControlError(.invalidArgument, "\(error)") }
            server.events.emit(StudioEvent(kind: .cameraModeChanged, camera: camera.id, details: [
                "requested": mode.description, "granted": "\(granted.width)x\(granted.height)@\(granted.frameRate)",
                "pixel_format": granted.pixelFormat.rawValue,
            ]))
            server.log.info("\(camera.id.name): asked for \(mode), the device granted \(granted)")
            var view = modeView(camera, granted)
            view.requested = mode.description
            let iso = server.cameras.isoRecorders.first { $0.cameraID == camera.id }
            iso?.cameraModeChanged()
            view.warning = IsoMode.warning(afterModeChangeOf: camera.id, sendsCompressed: camera.sendsCompressedFrames, iso: iso?.mode)
            if let warning = view.warning { server.log.info("warning: \(warning)") }
            return view
        }
    }

    enum Controls: SignedCommand {
        typealias Signature = CameraSignatures.Controls
        static let execution = ControlExecution.worker
        static func run(_ arguments: CameraArguments, in server: StudioServer) throws -> ControlsReply {
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
            let camera = try adjustable(server, arguments.camera)
            let (name, value) = (arguments.name, arguments.value)
            let previous = (try? camera.controls())?.first { $0.name == name }?.valueText
            let control: CameraControl
            do { control = try camera.setControl(name, to: value) } catch { throw ControlError(.invalidArgument, "\(error)") }
            var details = ["control": name, "value": control.valueText ?? value]
            if let previous { details["previous"] = previous }
            server.events.emit(StudioEvent(kind: .cameraControlChanged, camera: camera.id, details: details))
            return ControlSetReply(camera: camera.id.name, control: CameraControlView(control))
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
            let camera = try present(server, arguments.camera)
            let outcome: FocusOutcome
            if let adjustable = camera as? any AdjustableCamera {
                do { outcome = try adjustable.focus(at: point) } catch { throw ControlError(.unavailable, "\(error)") }
            } else {
                outcome = FocusOutcome(method: .none, reason: "\(camera.id.name) is a \(camera.backend.rawValue) camera: it has no focus or exposure controls")
            }
            var details = ["x": "\(point.x)", "y": "\(point.y)", "method": outcome.method.rawValue]
            details["exposure"] = outcome.exposure
            details["region"] = outcome.region.map { $0.map(String.init).joined(separator: ",") }
            details["reason"] = outcome.reason
            server.events.emit(StudioEvent(kind: .cameraFocus, camera: camera.id, details: details))
            server.log.info("\(camera.id.name): focus on \(point): \(outcome.method.rawValue)\(outcome.reason.map { " (\($0))" } ?? "")")
            return FocusReply(camera: camera.id.name, x: point.x, y: point.y, method: outcome.method.rawValue, exposure: outcome.exposure,
                              region: outcome.region, reason: outcome.reason)
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
