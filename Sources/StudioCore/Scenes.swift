/// Composed scenes, as the config declares them (`scenes:`) and the switcher composes them: a named stack
/// of layers. A scene is either a built-in layout that takes its sources in order, or explicit `layers`.
/// Cameras and scenes share one namespace: `studio switch NAME` takes either.
public struct SceneDescription: Sendable, Hashable {
    public var name: String
    /// A built-in layout; nil when `layers` gives the layers.
    public var layout: SceneLayout?
    /// The layout's sources, in its order (camera names, for now).
    public var sources: [String]
    /// `pip`: the inset's corner.
    public var corner: Corner
    /// `pip`: the inset's width, a fraction of the program's width (its height keeps the program's aspect).
    public var size: Double
    /// `pip`: the inset's distance from the edges, a fraction of the program's width.
    public var margin: Double
    /// `side-by-side`, `grid`, `main-strip`: the gap between cells, a fraction of the program's width.
    public var gap: Double
    /// Explicit layers, bottom first (a layer's `z` reorders them); with `layout` these go on top of it.
    public var layers: [LayerDescription]
    /// What shows where no layer covers the picture.
    public var background: RGBColor
    /// Where the program goes when this scene is on air and its main camera (`cameraNames.first`) is lost.
    public var backup: BackupRule?

    public init(name: String, layout: SceneLayout?, sources: [String] = [], corner: Corner = .bottomRight,
                size: Double = 0.3, margin: Double = 0.03, gap: Double = 0, layers: [LayerDescription] = [],
                background: RGBColor = .black, backup: BackupRule? = nil) {
        self.name = name
        self.layout = layout
        self.sources = sources
        self.corner = corner
        self.size = size
        self.margin = margin
        self.gap = gap
        self.layers = layers
        self.background = background
        self.backup = backup
    }

    /// The most sources a `grid` takes (3x3).
    public static let maxGridSources = 9

    /// Every camera the scene shows, in layer order, once each. The first is its main camera: the
    /// layout's first source, else its first camera layer (its `backup` is taken when that one is lost).
    public var cameraNames: [String] {
        var seen = Set<String>(), names: [String] = []
        for layer in layoutLayers() + layers {
            if case .camera(let name) = layer.source, seen.insert(name).inserted { names.append(name) }
        }
        return names
    }

    /// Why the scene cannot be composed, in the operator's words; nil when it can.
    public var problem: String? {
        if name.isEmpty { return "a scene needs a name" }
        if let layout {
            let range = layout.sourceCount
            if !range.contains(sources.count) {
                let wanted = range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
                return "layout \(layout.rawValue) takes \(wanted) source\(range.upperBound == 1 ? "" : "s"), got \(sources.count)"
            }
        } else if layers.isEmpty {
            return "give a layout (\(SceneLayout.allCases.map(\.rawValue).joined(separator: ", "))) or layers"
        }
        if !(0.05...1).contains(size) { return "size must be between 0.05 and 1 (a fraction of the width), got \(size)" }
        if !(0...0.4).contains(margin) { return "margin must be between 0 and 0.4, got \(margin)" }
        if !(0...0.2).contains(gap) { return "gap must be between 0 and 0.2, got \(gap)" }
        for (index, layer) in layers.enumerated() {
            if let why = layer.problem { return "layer \(index + 1): \(why)" }
        }
        return nil
    }

    /// The layers of the built-in layout, bottom first, in fractions of the program (before `layers`).
    public func layoutLayers(aspect: Double = 16.0 / 9.0) -> [LayerDescription] {
        guard let layout else { return [] }
        func layer(_ index: Int, _ rect: RelativeRect) -> LayerDescription? {
            index < sources.count ? LayerDescription(source: .camera(sources[index]), rect: .fraction(rect)) : nil
        }
        switch layout {
        case .full:
            return [layer(0, .whole)].compactMap { $0 }
        case .pip:
            let width = size, height = size  // the inset keeps the program's aspect: same fraction both ways
            let marginX = margin, marginY = margin * aspect
            let x = corner.isLeft ? marginX : 1 - marginX - width
            let y = corner.isTop ? marginY : 1 - marginY - height
            return [layer(0, .whole), layer(1, RelativeRect(x: x, y: y, width: width, height: height))].compactMap { $0 }
        case .sideBySide:
            let width = (1 - gap) / 2
            return [layer(0, RelativeRect(x: 0, y: 0, width: width, height: 1)),
                    layer(1, RelativeRect(x: 1 - width, y: 0, width: width, height: 1))].compactMap { $0 }
        case .grid:
            let columns = Self.gridColumns(for: sources.count), rows = (sources.count + columns - 1) / columns
            let gapY = gap * aspect
            let cellWidth = (1 - gap * Double(columns - 1)) / Double(columns)
            let cellHeight = (1 - gapY * Double(rows - 1)) / Double(rows)
            return sources.indices.compactMap { index in
                let column = index % columns, row = index / columns
                return layer(index, RelativeRect(x: Double(column) * (cellWidth + gap), y: Double(row) * (cellHeight + gapY),
                                                 width: cellWidth, height: cellHeight))
            }
        case .mainStrip:
            // The main source over the top three quarters, the others side by side in the bottom quarter.
            let others = sources.count - 1, stripHeight = 0.25, gapY = gap * aspect
            var result = [layer(0, RelativeRect(x: 0, y: 0, width: 1, height: others > 0 ? 1 - stripHeight - gapY : 1))]
            let cellWidth = others > 0 ? (1 - gap * Double(others - 1)) / Double(others) : 0
            for index in 0..<others {
                result.append(layer(index + 1, RelativeRect(x: Double(index) * (cellWidth + gap), y: 1 - stripHeight,
                                                            width: cellWidth, height: stripHeight)))
            }
            return result.compactMap { $0 }
        }
    }

    /// Columns of a grid of `count` sources: 1 -> 1, 2..4 -> 2, 5..9 -> 3.
    public static func gridColumns(for count: Int) -> Int {
        var columns = 1
        while columns * columns < count { columns += 1 }
        return columns
    }

    /// Every layer in pixels for a `width` x `height` program, in drawing order (by `z`, then as listed).
    public func resolvedLayers(width: Int, height: Int) -> [ResolvedLayer] {
        let all = layoutLayers(aspect: Double(width) / Double(height)) + layers
        return all.enumerated()
            .sorted { ($0.element.z, $0.offset) < ($1.element.z, $1.offset) }
            .map { ResolvedLayer($0.element, in: width, height) }
    }
}

/// The built-in layouts.
public enum SceneLayout: String, Sendable, Hashable, Codable, CaseIterable {
    /// One source, full frame.
    case full
    /// A main source full frame with a second one inset in a corner.
    case pip
    /// Two sources, left and right halves.
    case sideBySide = "side-by-side"
    /// 2 to 9 sources in a grid (2x2 up to 4, 3x3 up to 9), in reading order.
    case grid
    /// One big source on top, the others in a row below.
    case mainStrip = "main-strip"

    /// How many sources the layout takes.
    public var sourceCount: ClosedRange<Int> {
        switch self {
        case .full: return 1...1
        case .pip, .sideBySide: return 2...2
        case .grid: return 2...SceneDescription.maxGridSources
        case .mainStrip: return 2...SceneDescription.maxGridSources
        }
    }
}

/// A corner of the picture (a `pip` inset's place).
public enum Corner: String, Sendable, Hashable, Codable, CaseIterable {
    case topLeft = "top-left", topRight = "top-right", bottomLeft = "bottom-left", bottomRight = "bottom-right"
    public var isLeft: Bool { self == .topLeft || self == .bottomLeft }
    public var isTop: Bool { self == .topLeft || self == .topRight }
}

/// One layer of a scene: what it shows, where, and how.
public struct LayerDescription: Sendable, Hashable {
    public var source: LayerSource
    public var rect: LayerRect
    /// The part of the source shown, in fractions of it; nil: as `fit` decides.
    public var crop: RelativeRect?
    public var fit: LayerFit
    /// Drawing order: higher on top; equal z keeps the listed order.
    public var z: Int
    /// 0 (invisible) to 1 (opaque).
    public var opacity: Double
    /// A border drawn inside the layer's rectangle; width 0 for none.
    public var borderWidth: Int
    public var borderColor: RGBColor

    public init(source: LayerSource, rect: LayerRect, crop: RelativeRect? = nil, fit: LayerFit = .fill, z: Int = 0,
                opacity: Double = 1, borderWidth: Int = 0, borderColor: RGBColor = .white) {
        self.source = source
        self.rect = rect
        self.crop = crop
        self.fit = fit
        self.z = z
        self.opacity = opacity
        self.borderWidth = borderWidth
        self.borderColor = borderColor
    }

    public var problem: String? {
        if let why = rect.problem { return why }
        if let crop, let why = crop.problem { return "crop: \(why)" }
        if !(0...1).contains(opacity) { return "opacity must be between 0 and 1, got \(opacity)" }
        if !(0...100).contains(borderWidth) { return "border width must be between 0 and 100 pixels, got \(borderWidth)" }
        switch source {
        case .image(let path) where path.isEmpty: return "image must name a PNG or JPEG file"
        case .text(_, let style): return style.problem
        default: return nil
        }
    }
}

/// What a layer shows.
public enum LayerSource: Sendable, Hashable, CustomStringConvertible {
    /// A camera by name; a lost camera shows a slate in this layer only.
    case camera(String)
    /// A solid colour.
    case color(RGBColor)
    /// A PNG or JPEG file (its transparency kept), decoded and scaled to the layer once, when the scenes
    /// are set. The path is absolute or relative to the server's working directory (the config resolves
    /// its own relative paths against the config file's directory).
    case image(String)
    /// A text rendered with FreeType once, when the scenes are set, at its style's pixel size (shrunk
    /// to fit the layer if it is larger, never enlarged), placed in the layer by the style's alignment.
    case text(String, TextStyle)

    public var description: String {
        switch self {
        case .camera(let name): return name
        case .color(let color): return "color \(color)"
        case .image(let path): return "image \(path)"
        case .text(let text, _): return "text \"\(text)\""
        }
    }
}

/// How a source whose aspect differs from its layer's is fitted in.
public enum LayerFit: String, Sendable, Hashable, Codable, CaseIterable {
    /// Cropped (centred) to the layer's aspect, filling it.
    case fill
    /// Scaled whole into the layer, centred; the rest of the layer shows what is below.
    case fit
    /// Scaled to the layer's size, whatever the aspect.
    case stretch
}

/// A layer's place: in pixels of the program, or in fractions of its size.
public enum LayerRect: Sendable, Hashable {
    case pixels(x: Int, y: Int, width: Int, height: Int)
    case fraction(RelativeRect)

    public var problem: String? {
        switch self {
        case let .pixels(x, y, width, height):
            if width <= 0 || height <= 0 { return "the rectangle's width and height must be above 0, got \(width)x\(height)" }
            if x < 0 || y < 0 { return "the rectangle starts outside the picture (\(x),\(y))" }
            return nil
        case .fraction(let rect):
            return rect.problem
        }
    }

    /// The pixels it covers in a `width` x `height` program, snapped to even edges (4:2:0 chroma).
    public func pixelRect(width: Int, height: Int) -> PixelRect {
        switch self {
        case let .pixels(x, y, w, h):
            return RelativeRect(x: Double(x) / Double(width), y: Double(y) / Double(height),
                                width: Double(w) / Double(width), height: Double(h) / Double(height))
                .pixelRect(width: width, height: height)
        case .fraction(let rect):
            return rect.pixelRect(width: width, height: height)
        }
    }

    /// Why the rectangle is not wholly inside a `width` x `height` program; nil when it is.
    public func outside(width: Int, height: Int) -> String? {
        guard case let .pixels(x, y, w, h) = self, x + w > width || y + h > height else { return nil }
        return "the rectangle \(w)x\(h)+\(x)+\(y) reaches outside the \(width)x\(height) program"
    }
}

/// A layer placed on a program of a given size.
public struct ResolvedLayer: Sendable, Hashable {
    public var source: LayerSource
    /// Where it goes, even-aligned, possibly empty.
    public var rect: PixelRect
    public var crop: RelativeRect?
    public var fit: LayerFit
    public var opacity: Double
    public var borderWidth: Int
    public var borderColor: RGBColor

    public init(_ layer: LayerDescription, in width: Int, _ height: Int) {
        source = layer.source
        rect = layer.rect.pixelRect(width: width, height: height)
        crop = layer.crop
        fit = layer.fit
        opacity = layer.opacity
        borderWidth = layer.borderWidth
        borderColor = layer.borderColor
    }

    /// The part of a `sourceWidth` x `sourceHeight` picture to show, and where it goes, for this layer's fit.
    public func placement(sourceWidth: Int, sourceHeight: Int) -> (source: RelativeRect, destination: PixelRect) {
        let crop = self.crop ?? .whole
        guard fit != .stretch, sourceWidth > 0, sourceHeight > 0, !rect.isEmpty else { return (crop, rect) }
        let sourceAspect = crop.width * Double(sourceWidth) / (crop.height * Double(sourceHeight))
        let layerAspect = Double(rect.width) / Double(rect.height)
        switch fit {
        case .fill:
            if sourceAspect > layerAspect {  // wider: crop the sides
                let width = crop.width * layerAspect / sourceAspect
                return (RelativeRect(x: crop.x + (crop.width - width) / 2, y: crop.y, width: width, height: crop.height), rect)
            }
            let height = crop.height * sourceAspect / layerAspect
            return (RelativeRect(x: crop.x, y: crop.y + (crop.height - height) / 2, width: crop.width, height: height), rect)
        case .fit:
            func even(_ value: Double) -> Int { Int((value / 2).rounded()) * 2 }
            if sourceAspect > layerAspect {
                let height = min(rect.height, max(2, even(Double(rect.width) / sourceAspect)))
                return (crop, PixelRect(x: rect.x, y: rect.y + even(Double(rect.height - height) / 2), width: rect.width, height: height))
            }
            let width = min(rect.width, max(2, even(Double(rect.height) * sourceAspect)))
            return (crop, PixelRect(x: rect.x + even(Double(rect.width - width) / 2), y: rect.y, width: width, height: rect.height))
        case .stretch:
            return (crop, rect)
        }
    }
}
