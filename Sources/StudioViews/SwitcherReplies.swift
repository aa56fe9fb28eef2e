import Foundation
import StudioCore
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

    public init(source: String, kind: String, camera: String? = nil, previous: String? = nil, programMilliseconds: Int64, frame: Int, transition: TransitionReply? = nil) {
        self.source = source
        self.kind = kind
        self.camera = camera
        self.previous = previous
        self.programMilliseconds = programMilliseconds
        self.frame = frame
        self.transition = transition
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
    /// A stinger's clip and where it cuts underneath (ms from its start); nil for the others.
    public var clip: String?
    public var cutAtMilliseconds: Int?

    enum CodingKeys: String, CodingKey {
        case kind, frames, ms, color, clip
        case cutAtMilliseconds = "cut_at_ms"
    }

    public init(_ spec: TransitionSpec, rate: Rational) {
        kind = spec.kind.rawValue
        frames = spec.kind == .cut ? 0 : spec.frames
        ms = Int((Double(frames) * 1000 / rate.doubleValue).rounded())
        color = spec.color.description
        if spec.kind == .stinger {
            clip = spec.clip
            cutAtMilliseconds = spec.cutAtMilliseconds
        }
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

    public init(overlay: String, on: Bool, changed: Bool, programMilliseconds: Int64, frame: Int) {
        self.overlay = overlay
        self.on = on
        self.changed = changed
        self.programMilliseconds = programMilliseconds
        self.frame = frame
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

        public init(name: String, layout: String? = nil, sources: [String], layers: [LayerView], tally: String? = nil) {
            self.name = name
            self.layout = layout
            self.sources = sources
            self.layers = layers
            self.tally = tally
        }
    }

    public struct OverlayView: Codable, Sendable {
        public var name: String
        public var on: Bool
        public var layers: [LayerView]

        public init(name: String, on: Bool, layers: [LayerView]) {
            self.name = name
            self.on = on
            self.layers = layers
        }
    }

    public struct LayerView: Codable, Sendable {
        public var source: String
        /// `[x, y, width, height]` in program pixels.
        public var rect: [Int]
        public var opacity: Double

        public init(source: String, rect: [Int], opacity: Double) {
            self.source = source
            self.rect = rect
            self.opacity = opacity
        }
    }

    public init(scenes: [SceneView], overlays: [OverlayView], program: String? = nil, preview: String? = nil) {
        self.scenes = scenes
        self.overlays = overlays
        self.program = program
        self.preview = preview
    }
}
