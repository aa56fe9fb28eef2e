import StudioCore
import Capture
import Control

/// `play`, `pause`, `stop`, `cue`, `seek`, `next`: a player's transport. Each finds the player and the item,
/// hands the command to the player's thread (`PlayableCamera.transport`) and replies with where the
/// player is after it. On the query worker: the player's thread may take a file open to apply it.
enum PlayerCommands {
    enum Play: SignedCommand {
        typealias Signature = PlayerSignatures.Play
        static let execution = ControlExecution.worker
        static func run(_ arguments: PlayerArguments, in server: StudioServer) throws -> PlayerReply {
            try transport(server, arguments) { .play(item: $0) }
        }
    }

    enum Pause: SignedCommand {
        typealias Signature = PlayerSignatures.Pause
        static let execution = ControlExecution.worker
        static func run(_ arguments: PlayerArguments, in server: StudioServer) throws -> PlayerReply {
            try transport(server, arguments, takesItem: false) { _ in .pause }
        }
    }

    enum Stop: SignedCommand {
        typealias Signature = PlayerSignatures.Stop
        static let execution = ControlExecution.worker
        static func run(_ arguments: PlayerArguments, in server: StudioServer) throws -> PlayerReply {
            try transport(server, arguments, takesItem: false) { _ in .stop }
        }
    }

    enum Cue: SignedCommand {
        typealias Signature = PlayerSignatures.Cue
        static let execution = ControlExecution.worker
        static func run(_ arguments: PlayerArguments, in server: StudioServer) throws -> PlayerReply {
            guard arguments.item != nil else { throw ControlError(.invalidArgument, "cue: which item? (`studio cue \(arguments.player) ITEM`)") }
            let offset = try time(arguments.at, for: "cue") ?? 0
            return try transport(server, arguments) { .cue(item: $0 ?? 0, at: offset) }
        }
    }

    enum Seek: SignedCommand {
        typealias Signature = PlayerSignatures.Seek
        static let execution = ControlExecution.worker
        static func run(_ arguments: PlayerArguments, in server: StudioServer) throws -> PlayerReply {
            guard let offset = try time(arguments.at, for: "seek") else {
                throw ControlError(.invalidArgument, "seek: to what time? (`studio seek \(arguments.player) TIME`: \(PlayerSpec.timeForms))")
            }
            return try transport(server, arguments, takesItem: false) { _ in .seek(to: offset) }
        }
    }

    /// `at` as nanoseconds into the item (nil when not given); an error names the forms.
    private static func time(_ at: String?, for command: String) throws(ControlError) -> Int64? {
        guard let at else { return nil }
        guard let milliseconds = PlayerSpec.milliseconds(at: at) else {
            throw ControlError(.invalidArgument, "\(command): \"\(at)\" is no time into an item; expected \(PlayerSpec.timeForms)")
        }
        return milliseconds * 1_000_000
    }

    enum Next: SignedCommand {
        typealias Signature = PlayerSignatures.Next
        static let execution = ControlExecution.worker
        static func run(_ arguments: PlayerArguments, in server: StudioServer) throws -> PlayerReply {
            try transport(server, arguments, takesItem: false) { _ in .next }
        }
    }

    /// Finds the player and the item (`unknown_camera` and `not_found` list what exists), hands the
    /// player the command `make` gives for the item's index, and replies with its status after it.
    private static func transport(_ server: StudioServer, _ arguments: PlayerArguments, takesItem: Bool = true,
                                  _ make: (Int?) -> PlayerCommand) throws(ControlError) -> PlayerReply {
        let players = server.cameras.all.compactMap { $0 as? any PlayableCamera }
        guard let player = players.first(where: { $0.id.name == arguments.player }) else {
            let names = players.map(\.id.name)
            throw ControlError(.unknownCamera, "no player named \(arguments.player) (players: \(names.isEmpty ? "none" : names.joined(separator: ", ")))")
        }
        var index: Int?
        if let item = arguments.item {
            guard takesItem else { throw ControlError(.invalidArgument, "\(arguments.player): this command takes no item") }
            guard let found = player.playerSpec.item(named: item) else {
                let items = player.playerSpec.items.enumerated().map { "\($0.offset + 1) \(PlayerSpec.itemName($0.element))" }
                throw ControlError(.notFound, "\(arguments.player) has no item \(item) (items: \(items.joined(separator: ", ")))")
            }
            index = found
        }
        return PlayerReply(player: player.id.name, status: player.transport(make(index)))
    }
}
