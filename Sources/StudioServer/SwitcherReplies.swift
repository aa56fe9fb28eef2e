import Foundation
import StudioCore
import Switcher
import Control

// The replies of the vision mixer's commands (`switch`, `preview`, `cut`, `auto`, `scene`,
// `transition`, `scenes`, `overlay`); docs/control-protocol.md describes the same shapes.

/// What a cut, take or preview did.
public struct SwitchReply: Codable, Sendable {
    /// The camera or scene now on program (on preview, for `preview`).
    public var source: String
    /// `camera` or `scene`.
    public var kind: String
    /// The source when it is a camera, else null.
    @Nullable public var camera: String?
    @Nullable public var previous: String?
    /// The pts of the first program frame of the new source (of the transition's first frame, for `auto`).
    public var programMilliseconds: Int64
    public var frame: Int
    /// The transition that started (`auto`), else null.
    @Nullable public var transition: TransitionReply?

    enum CodingKeys: String, CodingKey {
        case source, kind, camera, previous, frame, transition
        case programMilliseconds = "program_ms"
    }
}

extension SwitchReply {
    init(_ outcome: SwitchOutcome, rate: Rational) {
        source = outcome.source.name
        kind = outcome.source.camera == nil ? "scene" : "camera"
        camera = outcome.source.camera?.name
        previous = outcome.previous?.name
        programMilliseconds = outcome.programTime.milliseconds
        frame = Int(outcome.frameNumber)
        transition = outcome.transition.map { TransitionReply($0, rate: rate) }
    }
}

/// A transition and its length.
public struct TransitionReply: Codable, Sendable {
    public var kind: String
    public var frames: Int
    /// Its length in program time.
    public var ms: Int
    /// A dip's colour.
    public var color: String

    init(_ spec: TransitionSpec, rate: Rational) {
        kind = spec.kind.rawValue
        frames = spec.kind == .cut ? 0 : spec.frames
        ms = Int((Double(frames) * 1000 / rate.doubleValue).rounded())
        color = spec.color.description
    }
}

/// What `overlay` did: the overlay is on air (or off) from the frame at `program_ms` on.
public struct OverlayReply: Codable, Sendable {
    public var overlay: String
    public var on: Bool
    /// False when it already was on (or off).
    public var changed: Bool
    public var programMilliseconds: Int64
    public var frame: Int

    enum CodingKeys: String, CodingKey {
        case overlay, on, changed, frame
        case programMilliseconds = "program_ms"
    }

    init(_ outcome: OverlayOutcome) {
        overlay = outcome.name
        on = outcome.on
        changed = outcome.changed
        programMilliseconds = outcome.programTime.milliseconds
        frame = Int(outcome.frameNumber)
    }
}

/// `scenes`: every scene with its layers, the overlays with theirs, and what is on program and preview.
public struct ScenesReply: Codable, Sendable {
    public var scenes: [SceneView]
    /// In drawing order (over every scene).
    public var overlays: [OverlayView]
    @Nullable public var program: String?
    @Nullable public var preview: String?

    public struct SceneView: Codable, Sendable {
        public var name: String
        @Nullable public var layout: String?
        public var sources: [String]
        public var layers: [LayerView]
        @Nullable public var tally: String?
    }

    public struct OverlayView: Codable, Sendable {
        public var name: String
        public var on: Bool
        public var layers: [LayerView]
    }

    public struct LayerView: Codable, Sendable {
        public var source: String
        /// `[x, y, width, height]` in program pixels.
        public var rect: [Int]
        public var opacity: Double
    }
}

extension StudioServer {
    func scenesView() -> ScenesReply {
        let status = switcher.status
        let format = switcher.format
        func views(_ layers: [ResolvedLayer]) -> [ScenesReply.LayerView] {
            layers.map { layer in
                ScenesReply.LayerView(source: layer.source.description, rect: [layer.rect.x, layer.rect.y, layer.rect.width, layer.rect.height],
                                      opacity: layer.opacity)
            }
        }
        let configuration = reloader.configuration
        let scenes = configuration.scenes.filter { status.scenes.contains($0.name) }.map { scene in
            ScenesReply.SceneView(name: scene.name, layout: scene.layout?.rawValue, sources: scene.cameraNames,
                                  layers: views(scene.resolvedLayers(width: format.width, height: format.height)),
                                  tally: status.tally[scene.name]?.rawValue)
        }
        let declared = Dictionary(configuration.overlays.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let overlays = status.overlays.map { overlay in
            ScenesReply.OverlayView(name: overlay.name, on: overlay.on,
                                    layers: views(declared[overlay.name]?.resolvedLayers(width: format.width, height: format.height) ?? []))
        }
        return ScenesReply(scenes: scenes, overlays: overlays, program: status.program?.name, preview: status.preview?.name)
    }
}
