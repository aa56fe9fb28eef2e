import StudioCore

/// PipeWire's Audio/Source nodes as the program's audio finds microphones (`PipeWireBackend`'s
/// `makeMicrophoneDiscovery`): each node a `FoundMicrophone` named by its node.name, captured by a
/// `PipeWireMicrophone` input.
extension PipeWireAudioDiscovery: MicrophoneDiscovery {
    public var finder: String { "PipeWire" }

    public var microphones: [FoundMicrophone] { sources.map(Self.microphone(_:)) }

    public var defaultIdentity: String? {
        guard let node = defaultNodeName else { return nil }
        return sources.first { $0.nodeName == node }?.identity
    }

    public func watch(onFound: @escaping @Sendable (FoundMicrophone) -> Void, onLost: @escaping @Sendable (FoundMicrophone) -> Void) {
        start(onAdded: { onFound(Self.microphone($0)) }, onRemoved: { onLost(Self.microphone($0)) })
    }

    public func microphone(named node: String?) -> FoundMicrophone {
        FoundMicrophone(identity: "pipewire:" + (node ?? "default"), displayName: node ?? "default", label: PipeWireMicrophone.label(node), node: node)
    }

    public func makeInput(for microphone: FoundMicrophone, format: AudioFormat, report: @escaping @Sendable (String) -> Void) -> any ClockedAudioInput {
        PipeWireMicrophone.input(node: microphone.node, format: format, remote: remote, report: report)
    }

    static func microphone(_ source: PipeWireAudioSource) -> FoundMicrophone {
        FoundMicrophone(identity: source.identity, displayName: source.displayName, label: PipeWireMicrophone.label(source.nodeName),
                        node: source.nodeName, usbDevice: source.usbDevice)
    }
}
