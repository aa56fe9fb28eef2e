import Foundation
import StudioCore
import Capture
import Control

/// `camera` (mode: size and rate), `controls` and `control`: the operator's handles on a device camera
/// (any `AdjustableCamera`; the server never sees a backend's types). They run on the query worker,
/// not the control thread: a mode change waits for the capture thread to restart its stream.
enum CameraCommands {
    typealias Deferred = @Sendable (@escaping @Sendable (ControlReply) -> Void, @escaping @Sendable () throws -> JSONValue) throws -> Void

    static func register(on router: ControlRouter, server: @escaping @Sendable () throws(ControlError) -> StudioServer, deferred: @escaping Deferred) {
        router.addDeferred("camera") { request, reply in
            let server = try server()
            let camera = try adjustable(server, try request.string("camera"))
            var mode = CameraModeRequest()
            if let size = try request.optionalString("size") {
                let parts = size.lowercased().split(separator: "x")
                guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0 else {
                    throw ControlError(.invalidArgument, "camera: size \"\(size)\" is not WIDTHxHEIGHT (e.g. 1280x720)")
                }
                (mode.width, mode.height) = (width, height)
            }
            if let fps = try request.optionalString("fps") {
                guard let rate = Rational(parsingRate: fps) else {
                    throw ControlError(.invalidArgument, "camera: fps \"\(fps)\" is not a frame rate (e.g. 30, 29.97, 30000/1001)")
                }
                mode.frameRate = rate
            }
            let requested = mode
            try deferred(reply) {
                let mode = requested
                guard mode.width != nil || mode.frameRate != nil else { return modeView(camera, camera.currentFormat) }
                let granted: CameraFormat
                do { granted = try camera.setMode(mode) } catch { throw ControlError(.invalidArgument, "\(error)") }
                server.events.emit(StudioEvent(kind: .cameraModeChanged, camera: camera.id, details: [
                    "requested": mode.description, "granted": "\(granted.width)x\(granted.height)@\(granted.frameRate)",
                    "pixel_format": granted.pixelFormat.rawValue,
                ]))
                server.log.info("\(camera.id.name): asked for \(mode), the device granted \(granted)")
                var view = modeView(camera, granted)
                if case .object(var members) = view {
                    members["requested"] = .string(mode.description)
                    view = .object(members)
                }
                return view
            }
        }
        router.addDeferred("controls") { request, reply in
            let server = try server()
            let camera = try adjustable(server, try request.string("camera"))
            try deferred(reply) {
                let controls: [CameraControl]
                do { controls = try camera.controls() } catch { throw ControlError(.unavailable, "\(error)") }
                return .object(["camera": .string(camera.id.name), "controls": .array(controls.map(controlView))])
            }
        }
        router.addDeferred("control") { request, reply in
            let server = try server()
            let camera = try adjustable(server, try request.string("camera"))
            let name = try request.string("name")
            let value = try request.string("value")
            try deferred(reply) {
                let previous = (try? camera.controls())?.first { $0.name == name }?.valueText
                let control: CameraControl
                do { control = try camera.setControl(name, to: value) } catch { throw ControlError(.invalidArgument, "\(error)") }
                var details = ["control": name, "value": control.valueText ?? value]
                if let previous { details["previous"] = previous }
                server.events.emit(StudioEvent(kind: .cameraControlChanged, camera: camera.id, details: details))
                return .object(["camera": .string(camera.id.name), "control": controlView(control)])
            }
        }
    }

    private static func adjustable(_ server: StudioServer, _ name: String) throws(ControlError) -> any AdjustableCamera {
        guard let camera = server.cameras.camera(named: CameraID(name)) else {
            throw ControlError(.unknownCamera, "no camera named \(name) (see `studio cameras`)")
        }
        guard server.cameras.isPresent(camera.id) else {
            throw ControlError(.unavailable, "\(name) is lost (\(server.cameras.lostReason(camera.id) ?? "not present")); it comes back by itself")
        }
        guard let adjustable = camera as? any AdjustableCamera else {
            throw ControlError(.invalidArgument, "\(name) is a \(camera.backend.rawValue) camera: it has no adjustable mode or controls")
        }
        return adjustable
    }

    private static func modeView(_ camera: any Camera, _ format: CameraFormat?) -> JSONValue {
        var members: [String: JSONValue] = ["camera": .string(camera.id.name)]
        if let format {
            members["granted"] = .object([
                "pixel_format": .string(format.pixelFormat.rawValue), "width": .int(format.width), "height": .int(format.height),
                "fps": .number(format.frameRate.doubleValue), "fps_text": .string(format.frameRate.description),
            ])
        } else {
            members["granted"] = .null
        }
        return .object(members)
    }

    static func controlView(_ control: CameraControl) -> JSONValue {
        var members: [String: JSONValue] = [
            "name": .string(control.name), "label": .string(control.label), "type": .string(control.kind.rawValue),
            "min": .number(Double(control.minimum)), "max": .number(Double(control.maximum)), "step": .number(Double(control.step)),
            "default": .number(Double(control.defaultValue)),
            "value": control.value.map { .number(Double($0)) } ?? .null,
            "value_text": control.valueText.map { .string($0) } ?? .null,
            "read_only": .bool(control.isReadOnly), "inactive": .bool(control.isInactive),
            "summary": .string(control.summary),
        ]
        if !control.menu.isEmpty {
            members["menu"] = .array(control.menu.map { .object(["index": .number(Double($0.index)), "name": .string($0.name)]) })
        }
        return .object(members)
    }
}
