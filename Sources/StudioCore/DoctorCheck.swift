/// One line of `studio doctor`: what a check found on this machine, ok / warning / problem, and when it
/// is not ok, what to do. Declared here, inward, so that each source backend (Capture) states its own
/// checks and the doctor (StudioServer) runs them beside its own.
public struct DoctorCheck: Sendable {
    public enum Status: String, Sendable { case ok, warning, problem }

    public var area: String
    public var status: Status
    public var message: String
    public var fix: String?
    /// What the check found, for `--json` (e.g. a V4L2 node's card, identity and mode).
    public var details: [String: String]
    public init(_ area: String, _ status: Status, _ message: String, fix: String? = nil, details: [String: String] = [:]) {
        self.area = area
        self.status = status
        self.message = message
        self.fix = fix
        self.details = details
    }
}
