import StudioCore

/// A microphone a backend found (or one the config names), as the program's audio knows it: stable
/// across restarts and replugging by its identity, shown by its display name.
public struct FoundMicrophone: Sendable, Hashable {
    /// Stable across restarts and replugging (`pipewire:NODE` plus the device's serial or bus path).
    public var identity: String
    public var displayName: String
    /// What it captures, as its input says (the `audio` reply's `source`: `pipewire:NODE`).
    public var label: String
    /// The backend's own name for it (a PipeWire node's node.name); nil: the backend's default microphone.
    public var node: String?
    /// The USB device it belongs to, when it says (a webcam's microphone and its camera share it).
    public var usbDevice: String?

    public init(identity: String, displayName: String, label: String, node: String?, usbDevice: String? = nil) {
        self.identity = identity
        self.displayName = displayName
        self.label = label
        self.node = node
        self.usbDevice = usbDevice
    }
}

/// How a backend finds its microphones and keeps watching (found, lost, back), and captures one as an
/// input of the program's audio set: what `SourceBackend.makeMicrophoneDiscovery` gives. The program's
/// audio names, mixes and reports them the same whatever the backend (PipeWire's Audio/Source nodes
/// today), so a backend with microphones adds no code there.
public protocol MicrophoneDiscovery: Sendable {
    /// Who finds them, for the operator (`PipeWire`): "no microphone: PipeWire has no audio source".
    var finder: String { get }
    /// The microphones present now, in a stable order (the first start names them in it: `mic1`, `mic2`).
    var microphones: [FoundMicrophone] { get }
    /// The desktop's default microphone's identity (the one `microphones` starts up); nil when none.
    var defaultIdentity: String? { get }
    /// Why it cannot look (no daemon there); nil while it can.
    var unreachable: String? { get }
    /// Reports what is present now, then every change, until `stop()`; never blocks the caller's thread on
    /// the backend beyond a first look.
    func watch(onFound: @escaping @Sendable (FoundMicrophone) -> Void, onLost: @escaping @Sendable (FoundMicrophone) -> Void)
    func stop()
    /// The microphone the config names by the backend's own name (`pipewire:NODE`); nil: the default one.
    func microphone(named node: String?) -> FoundMicrophone
    /// The input that captures `microphone` on the set's clock, in `format`; `report` takes its lines
    /// for the log (missing, found, lost).
    func makeInput(for microphone: FoundMicrophone, format: AudioFormat, report: @escaping @Sendable (String) -> Void) -> any ClockedAudioInput
}
