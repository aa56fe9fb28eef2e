/// A backup for a camera or a scene on air (`backup:` and `back:` in a camera's pin or a scene): when
/// it is lost on program, the program cuts to `backup` (a camera or a scene) on that same frame instead
/// of the "CAMERA LOST" slate.
public struct BackupRule: Sendable, Hashable {
    /// The camera or scene to cut to.
    public var backup: String
    /// Whether the program cuts back by itself when the lost camera returns.
    public var back: BackMode

    public init(backup: String, back: BackMode = .manual) {
        self.backup = backup
        self.back = back
    }
}

/// `back:`: what happens when a lost camera that its backup replaced returns.
public enum BackMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// The program cuts back to it on the first frame it delivers again.
    case auto
    /// The backup stays on air; the operator cuts back (`studio switch NAME`).
    case manual
}
