import CVA

/// What a render node's VAAPI driver decodes, by libavcodec's codec names (`h264`, `hevc`): the
/// network cameras' decoders use it where it has their codec.
public struct VAAPIDecoder: Sendable, Hashable {
    public var renderNode: String
    public var driver: String
    public var codecs: Set<String>
}

extension VAAPIProbe {
    /// The VA profiles with a decode (VLD) entrypoint that make a codec decodable, by libavcodec's name.
    static let decodeProfiles: [String: [VAProfile]] = [
        "h264": [VAProfileH264ConstrainedBaseline, VAProfileH264Main, VAProfileH264High],
        "hevc": [VAProfileHEVCMain],
    ]

    /// The first render node whose driver decodes H.264 or HEVC (through the same probing as the encoder:
    /// `renderNodes`, the node's DRM display); else why none does (`.noRenderNode` when there is none).
    public static func probeDecode() -> Result<VAAPIDecoder, VAAPIProbeFailure> {
        var firstFailure: VAAPIProbeFailure?
        for node in renderNodes() {
            switch probeDecode(renderNode: node) {
            case .success(let decoder): return .success(decoder)
            case .failure(let failure): if firstFailure == nil { firstFailure = failure }
            }
        }
        return .failure(firstFailure ?? VAAPIProbeFailure(renderNode: nil, reason: .noRenderNode))
    }

    /// Opens `renderNode`, initializes libva on it and lists the codecs it decodes.
    public static func probeDecode(renderNode: String) -> Result<VAAPIDecoder, VAAPIProbeFailure> {
        let display: VADRMDisplay
        do {
            display = try VADRMDisplay(renderNode: renderNode)
        } catch {
            // The encoder's probe tells the same node's failure in the same words.
            return .failure(probe(renderNode: renderNode).failure
                ?? VAAPIProbeFailure(renderNode: renderNode, reason: .initFailed(String(describing: error))))
        }
        let offered = display.profiles()
        let codecs = Set(decodeProfiles.compactMap { codec, profiles in
            profiles.contains { offered.contains($0) && display.entrypoints(for: $0).contains(VAEntrypointVLD) } ? codec : nil
        })
        guard !codecs.isEmpty else {
            return .failure(VAAPIProbeFailure(renderNode: renderNode, reason: .initFailed("the driver (\(display.vendor)) decodes neither H.264 nor HEVC")))
        }
        return .success(VAAPIDecoder(renderNode: renderNode, driver: display.vendor, codecs: codecs))
    }
}
