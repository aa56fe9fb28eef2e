import StudioCore

/// A backup on air: what it replaced, and how the program gets back.
public struct BackupStatus: Sendable, Codable, Hashable {
    /// The camera or scene that was lost on program (the first of the chain, when backups fell through).
    public var lost: String
    /// The backup on program now.
    public var onAir: String
    /// `auto`: the program cuts back to `lost` when it returns; `manual`: `studio switch <lost>`.
    public var back: BackMode

    /// How the program gets back, in the operator's words: `studio switch cam1`, or by itself.
    public var cutBack: String { back == .manual ? "studio switch \(lost)" : "by itself when \(lost) returns" }
}

/// The backup camera, decided on the program thread once per frame before the picture is rendered.
///
/// A backup is taken when the source on program goes from live to lost while it is on air: a camera
/// whose picture would be the "CAMERA LOST" slate on this frame (its device went away, or its newest
/// frame is older than the loss timeout), or a scene whose main camera (its first) is. The program then
/// shows the backup on this very frame instead of the slate. A backup that is not live itself (lost,
/// waiting, unknown) is skipped for its own backup, and so on along the chain; a chain that comes back
/// to a name already seen stops there (the config refuses such cycles). Nothing live in the chain: the
/// slate, as without a backup. Cutting to a camera that is already lost shows its slate: the operator's
/// choice stands. With `back: auto` the program cuts back to the lost source on the first frame it is
/// live again, as long as the backup (or the backup it fell through to) is still on program; any cut or
/// take by the operator ends the backup.
struct BackupWatch {
    /// How live a source is on this frame.
    enum Liveness: Equatable {
        case live
        /// Lost: `removed` (the device went away) or `silent` (no fresh frame for the loss timeout).
        case lost(String)
        /// Not a picture, but not a loss either (waiting for its first frame, or unknown).
        case unavailable
    }

    enum Decision: Equatable {
        /// Cut to `backup` because `lost` (on program) is lost for `reason`; `skipped` were not live;
        /// `origin` is what the program returns to (`lost`, or the source a backup on air replaced).
        case take(backup: ProgramSource, lost: ProgramSource, origin: String, reason: String, skipped: [String], back: BackMode)
        /// Cut back to `source` (`back: auto`) from the backup on air.
        case cutBack(to: ProgramSource, from: ProgramSource)
    }

    private(set) var active: BackupStatus?
    /// The program source of the previous frame, and whether it was live then.
    private var last: (source: ProgramSource, live: Bool)?

    /// The operator cut or took something: a backup on air is no longer one.
    mutating func operatorTook() { active = nil }

    /// What to do on this frame with `program` on air (nil during a transition: no backup then).
    /// - Parameters:
    ///   - liveness: how live a source is now.
    ///   - resolve: a backup's name as a source (a scene first, like every name), nil when none exists.
    mutating func decide(program: ProgramSource?, rules: [String: BackupRule], liveness: (ProgramSource) -> Liveness,
                         resolve: (String) -> ProgramSource?) -> Decision? {
        guard let program else {
            last = nil
            return nil
        }
        if let active, active.onAir != program.name { self.active = nil }
        var decision: Decision?
        let now = liveness(program)
        if let active, active.back == .auto, let lost = resolve(active.lost), liveness(lost) == .live {
            decision = .cutBack(to: lost, from: program)
            self.active = nil
        } else if case .lost(let reason) = now, let last, last.source == program, last.live {
            decision = backup(for: program, reason: reason, rules: rules, liveness: liveness, resolve: resolve)
        }
        switch decision {
        case .take(let backup, _, _, _, _, _)?: last = (backup, true)
        case .cutBack(let source, _)?: last = (source, true)
        case nil: last = (program, now == .live)
        }
        return decision
    }

    /// The first live source along `program`'s chain of backups.
    private mutating func backup(for program: ProgramSource, reason: String, rules: [String: BackupRule],
                                 liveness: (ProgramSource) -> Liveness, resolve: (String) -> ProgramSource?) -> Decision? {
        guard let first = rules[program.name] else { return nil }
        // When a backup on air is lost in turn, the chain's origin stays what the program returns to.
        let origin = active.map { ($0.lost, $0.back) } ?? (program.name, first.back)
        var seen: Set<String> = [program.name], skipped: [String] = []
        var rule: BackupRule? = first
        while let current = rule, seen.insert(current.backup).inserted {
            guard let candidate = resolve(current.backup) else {
                skipped.append(current.backup)
                rule = rules[current.backup]
                continue
            }
            if liveness(candidate) == .live {
                active = BackupStatus(lost: origin.0, onAir: candidate.name, back: origin.1)
                return .take(backup: candidate, lost: program, origin: origin.0, reason: reason, skipped: skipped, back: origin.1)
            }
            skipped.append(candidate.name)
            rule = rules[candidate.name]
        }
        return nil
    }
}
