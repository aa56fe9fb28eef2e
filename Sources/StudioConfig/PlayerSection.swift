import StudioCore

/// `players:`: media players, each a mapping of `name`, `items` (a list of files, relative to the
/// config's directory), optional `end` (`PlayerEnd`), `still_seconds`, `autoplay`, `restart` and
/// `end_transition` (a `transition:` mapping; its `ms` in `endTransitionMilliseconds`, made frames once
/// the program's rate is known). Names unique, at most
/// `maximumPlayers`. Whether the files can be played is checked at start by the player backend.
struct PlayerList: Decodable {
    static let maximumPlayers = 16
    var players: [PlayerSpec] = []
    var endTransitionMilliseconds: [Int?] = []

    init(from decoder: any Decoder) throws {
        var items = try decoder.unkeyedContainer()
        var nameLines: [String: Int] = [:]
        while !items.isAtEnd {
            let item = try items.superDecoder()
            let keys = try item.rewording({ "expected a mapping with name and items (and optional end, still_seconds, autoplay, restart, end_transition), got \($0)" }) {
                try item.container(keyedBy: PlayerSpec.CodingKeys.self)
            }
            guard let name = try keys.parse(.name, .name) else {
                throw item.failure("missing: the player's name (for example intro)", at: PlayerSpec.CodingKeys.name)
            }
            guard let files = try keys.parseList(.items, .path), !files.isEmpty else {
                throw item.failure("missing: the player's items, a list of files (for example [media/intro.mov])", at: PlayerSpec.CodingKeys.items)
            }
            let end = try keys.parse(.end, .oneOf("an end", PlayerEnd.self)) ?? .hold
            let still = try keys.parse(.stillSeconds, .stillSeconds) ?? PlayerSpec.defaultStillSeconds
            let autoplay = try keys.parse(.autoplay, .boolean) ?? false, restart = try keys.parse(.restart, .boolean) ?? false
            let endTransition = try keys.decodeIfPresent(TransitionSection.self, forKey: .endTransition)
            let line = item.line(at: item.codingPath + [PlayerSpec.CodingKeys.name])
            if let first = nameLines[name] {
                throw item.failure("the name \"\(name)\" is already used by the player on line \(first)", at: PlayerSpec.CodingKeys.name)
            }
            nameLines[name] = line
            guard players.count < Self.maximumPlayers else {
                throw item.failure("at most \(Self.maximumPlayers) players", at: PlayerSpec.CodingKeys.name)
            }
            players.append(PlayerSpec(name: CameraID(name), items: files.map(item.resolve), end: end, stillSeconds: still,
                                      autoplay: autoplay, restart: restart, endTransition: endTransition?.spec))
            endTransitionMilliseconds.append(endTransition?.milliseconds)
        }
    }
}

extension ValueSyntax where Value == Double {
    /// How long a still is shown: 0.1 s to a day.
    public static var stillSeconds: Self { seconds(in: 0.1...86_400) }
}
