import StudioCore
import Control

// The players' transport (`play`, `pause`, `stop`, `cue`, `next`) as the server and the CLI both know
// it. The server's `PlayerCommands` implements them; `studio play` and the others call them.

/// `{"player": "intro"}`, and for `play` and `cue` an item (its file name, path or number from 1);
/// for `seek` and `cue` a time into the item (`at`: `PlayerSpec.timeForms`).
public struct PlayerArguments: Codable, Sendable {
    public var player: String
    public var item: String?
    public var at: String?
    public init(player: String, item: String? = nil, at: String? = nil) {
        self.player = player
        self.item = item
        self.at = at
    }
}

/// The player after the command: `{"player", "status": {"item", "item_number", "items", "state", "position_ms", "remaining_ms", ...}}`.
public struct PlayerReply: Codable, Sendable {
    public var player: String
    public var status: PlayerStatus
    public init(player: String, status: PlayerStatus) {
        self.player = player
        self.status = status
    }
}

public enum PlayerSignatures {
    public enum Play: CommandSignature {
        public typealias Arguments = PlayerArguments
        public typealias Reply = PlayerReply
        public static let name = "play"
        public static let summary = "plays a player from where it is, or an item of it from its start"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/player/{player}/play")
        public static let positionalArguments = ["item"]
    }

    public enum Pause: CommandSignature {
        public typealias Arguments = PlayerArguments
        public typealias Reply = PlayerReply
        public static let name = "pause"
        public static let summary = "pauses a player on the frame it shows"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/player/{player}/pause")
    }

    public enum Stop: CommandSignature {
        public typealias Arguments = PlayerArguments
        public typealias Reply = PlayerReply
        public static let name = "stop"
        public static let summary = "stops a player, back on its first item's first frame (cued)"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/player/{player}/stop")
    }

    public enum Cue: CommandSignature {
        public typealias Arguments = PlayerArguments
        public typealias Reply = PlayerReply
        public static let name = "cue"
        public static let summary = "cues an item of a player: its first frame shown, stopped"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/player/{player}/cue")
        public static let positionalArguments = ["item", "at"]
    }

    public enum Seek: CommandSignature {
        public typealias Arguments = PlayerArguments
        public typealias Reply = PlayerReply
        public static let name = "seek"
        public static let summary = "takes a player to a time into its item (playing on from there if it played)"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/player/{player}/seek")
        public static let positionalArguments = ["at"]
    }

    public enum Next: CommandSignature {
        public typealias Arguments = PlayerArguments
        public typealias Reply = PlayerReply
        public static let name = "next"
        public static let summary = "takes a player on to its next item (playing on if it played)"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/player/{player}/next")
    }
}
