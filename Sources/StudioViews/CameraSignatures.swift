import StudioCore
import Control

// The camera commands as the server and the CLI both know them (`ping` and `cameras` too).

/// `{"camera": "cam1"}`.
public struct CameraArguments: Codable, Sendable {
    public var camera: String
    public init(camera: String) { self.camera = camera }
}

/// `camera`: a size and/or frame rate to ask a device camera for.
public struct CameraModeArguments: Codable, Sendable {
    public var camera: String
    /// `WIDTHxHEIGHT`.
    public var size: String?
    /// `30`, `29.97`, `30000/1001`.
    public var fps: String?
    public init(camera: String, size: String? = nil, fps: String? = nil) {
        self.camera = camera
        self.size = size
        self.fps = fps
    }
}

/// `control`: one control of a camera and its new value (a number, on/off, or a menu item).
public struct SetControlArguments: Codable, Sendable {
    public var camera: String
    public var name: String
    public var value: String
    public init(camera: String, name: String, value: String) {
        self.camera = camera
        self.name = name
        self.value = value
    }
}

/// `focus`: a point of the camera's picture, x and y from 0 to 1.
public struct FocusArguments: Codable, Sendable {
    public var camera: String
    public var x: Double
    public var y: Double
    public init(camera: String, x: Double, y: Double) {
        self.camera = camera
        self.x = x
        self.y = y
    }
}

public enum CameraSignatures {
    public enum Ping: CommandSignature {
        public typealias Reply = PingReply
        public static let name = "ping"
        public static let summary = "answers {\"pong\": true}"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/ping")
    }

    public enum Cameras: CommandSignature {
        public typealias Reply = CamerasReply
        public static let name = "cameras"
        public static let summary = "every camera of the session, lost ones included, with its state, format and offered modes"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/cameras")
    }

    public enum Mode: CommandSignature {
        public typealias Arguments = CameraModeArguments
        public typealias Reply = CameraModeReply
        public static let name = "camera"
        public static let summary = "asks a device camera for a size and/or frame rate; answers what the device granted"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/camera/{camera}/mode")
    }

    public enum Controls: CommandSignature {
        public typealias Arguments = CameraArguments
        public typealias Reply = ControlsReply
        public static let name = "controls"
        public static let summary = "a device camera's controls (brightness, focus...) with their ranges and values"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/camera/{camera}/controls")
    }

    public enum SetControl: CommandSignature {
        public typealias Arguments = SetControlArguments
        public typealias Reply = ControlSetReply
        public static let name = "control"
        public static let summary = "sets one control of a device camera and answers it read back"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/camera/{camera}/controls")
        public static let positionalArguments = ["name", "value"]
    }

    public enum Focus: CommandSignature {
        public typealias Arguments = FocusArguments
        public typealias Reply = FocusReply
        public static let name = "focus"
        public static let summary = "asks a camera to focus and expose on a point of its picture (x, y from 0 to 1); answers how it could"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/camera/{camera}/focus")
        public static let positionalArguments = ["x", "y"]
    }
}
