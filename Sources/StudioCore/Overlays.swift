/// An overlay (a downstream keyer, in switcher terms): layers drawn on top of every program picture,
/// after scenes and transitions, switched on and off by name (`studio overlay NAME on|off`). A logo bug,
/// a lower third. Its layers take the same sources and places as a scene's.
public struct OverlayDescription: Sendable, Hashable {
    public var name: String
    /// Bottom first (a layer's `z` reorders them).
    public var layers: [LayerDescription]
    /// Whether it is on air when the server starts.
    public var on: Bool

    public init(name: String, layers: [LayerDescription], on: Bool = false) {
        self.name = name
        self.layers = layers
        self.on = on
    }

    /// Every camera it shows, in layer order, once each.
    public var cameraNames: [String] {
        var seen = Set<String>(), names: [String] = []
        for layer in layers {
            if case .camera(let name) = layer.source, seen.insert(name).inserted { names.append(name) }
        }
        return names
    }

    /// Why the overlay cannot be drawn, in the operator's words; nil when it can.
    public var problem: String? {
        if name.isEmpty { return "an overlay needs a name" }
        if layers.isEmpty { return "an overlay needs layers" }
        for (index, layer) in layers.enumerated() {
            if let why = layer.problem { return "layer \(index + 1): \(why)" }
        }
        return nil
    }

    /// Its layers in pixels for a `width` x `height` program, in drawing order (by `z`, then as listed).
    public func resolvedLayers(width: Int, height: Int) -> [ResolvedLayer] {
        layers.enumerated()
            .sorted { ($0.element.z, $0.offset) < ($1.element.z, $1.offset) }
            .map { ResolvedLayer($0.element, in: width, height) }
    }
}
