import StudioCore
import Control

// The vision mixer's commands as the server and the CLI both know them: names, arguments, replies,
// routes. The server's `SwitcherCommands` implement them; `studio switch`, `preview`, `cut`... call them.

/// A camera or scene name: `source`, or `camera` (the older name of the argument).
public struct SourceArguments: Codable, Sendable {
    public var source: String?
    public var camera: String?

    public init(source: String) { self.source = source }
}

/// `kind` with `frames` or `ms`: a transition (the default's kind and length where left out).
public struct TransitionArguments: Codable, Sendable {
    public var kind: String?
    public var frames: Int?
    public var ms: Int?

    public init(kind: String? = nil, frames: Int? = nil, ms: Int? = nil) {
        self.kind = kind
        self.frames = frames
        self.ms = ms
    }

    /// Whether any of the three is given (`transition` without them shows the current one).
    public var isEmpty: Bool { kind == nil && frames == nil && ms == nil }
}

public struct SceneArguments: Codable, Sendable {
    public var scene: String
    public init(scene: String) { self.scene = scene }
}

/// An overlay and what to do with it: on, off, or (nil) toggle.
public struct OverlayArguments: Codable, Sendable {
    public var name: String
    public var on: Bool?
    public init(name: String, on: Bool?) {
        self.name = name
        self.on = on
    }
}

public enum SwitcherSignatures {
    public enum Switch: CommandSignature {
        public typealias Arguments = SourceArguments
        public typealias Reply = SwitchReply
        public static let name = "switch"
        public static let summary = "cuts the program to a camera or scene; answers once the cut is on air"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/switch")
        public static let positionalArguments = ["source"]
    }

    public enum Scene: CommandSignature {
        public typealias Arguments = SceneArguments
        public typealias Reply = SwitchReply
        public static let name = "scene"
        public static let summary = "cuts the program to a scene (switch, for scenes only)"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/scene/{scene}")
    }

    public enum Preview: CommandSignature {
        public typealias Arguments = SourceArguments
        public typealias Reply = SwitchReply
        public static let name = "preview"
        public static let summary = "puts a camera or scene on preview, ready for cut or auto"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/preview")
        public static let positionalArguments = ["source"]
    }

    public enum Cut: CommandSignature {
        public typealias Reply = SwitchReply
        public static let name = "cut"
        public static let summary = "swaps preview and program on the next frame (completes a running transition at once)"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/cut")
    }

    public enum Auto: CommandSignature {
        public typealias Arguments = TransitionArguments
        public typealias Reply = SwitchReply
        public static let name = "auto"
        public static let summary = "runs a transition from program to preview (the default one unless given)"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/auto")
        public static let positionalArguments = ["kind", "ms"]
    }

    public enum Transition: CommandSignature {
        public typealias Arguments = TransitionArguments
        public typealias Reply = TransitionReply
        public static let name = "transition"
        public static let summary = "sets (or, with no arguments, shows) the transition auto runs"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/transition")
        public static let positionalArguments = ["kind", "ms"]
    }

    public enum Overlay: CommandSignature {
        public typealias Arguments = OverlayArguments
        public typealias Reply = OverlayReply
        public static let name = "overlay"
        public static let summary = "switches an overlay on or off (toggles it without on); answers once the frame is on air"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/overlay/{name}")
        public static let positionalArguments = ["on"]
    }

    public enum Scenes: CommandSignature {
        public typealias Reply = ScenesReply
        public static let name = "scenes"
        public static let summary = "the scenes with their layers, sources and tally"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/scenes")
    }
}
