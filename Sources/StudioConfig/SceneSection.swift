import StudioCore

// `scenes:` and `transition:` — the vision mixer's composed scenes and its default transition.
//
//     scenes:
//       - name: pip
//         layout: pip            # full, pip, side-by-side, grid, main-strip
//         sources: [cam1, cam2]
//         corner: top-right      # pip: the inset's corner
//         size: 0.3              # pip: the inset's width, a fraction of the program's
//       - name: wall
//         background: "#102030"
//         backup: cam3           # taken when the scene's main camera (its first) is lost on air
//         back: auto             # auto: back by itself when it returns; manual (default): `studio switch`
//         layers:                # explicit layers, bottom first
//           - source: cam1       # a camera; or `color: red`, `image: FILE`, `text: "..."` (below)
//             rect: [0.05, 0.1, 0.6, 0.6]   # x, y, width, height: fractions (all <= 1) or pixels
//             crop: [0.1, 0, 0.8, 1]        # the part of the source shown, fractions
//             fit: fill          # fill (crop to fill), fit (letterbox), stretch
//             opacity: 0.9
//             z: 1
//             border: { width: 4, color: white }
//           - image: logo.png    # PNG or JPEG, transparency kept; relative to this file's directory
//             rect: [1100, 40, 140, 80]     # scaled once to the layer under `fit` (default for images: fit)
//           - text: "Jane Doe"   # rendered once with FreeType at its size (shrunk if larger than the layer)
//             rect: [0.05, 0.78, 0.5, 0.12]
//             style:             # a mapping of its own: `color` here is the letters', not a layer source
//               font: /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf   # default DejaVu Sans
//               size: 48         # pixels (the em height), default 48
//               color: white     # the letters
//               box: "#1040a0"   # a box behind the text; none when left out
//               box_opacity: 0.8
//               padding: 16      # pixels between the text and the box's edges
//               align: left      # left, center, right: lines, and the text in its layer
//     overlays:                  # downstream keyers: drawn over every scene and transition
//       - name: logo
//         on: true               # on air from the start (default false); `studio overlay logo off`
//         layers:                # the same layers as a scene's
//           - image: logo.png
//             rect: [1100, 40, 140, 80]
//     transition: { kind: mix, frames: 15 }   # or ms: 500; dip has color
//
// A scene's name is no camera's (`camN`, a pin's, a pin's `NAME-2`...), and no scene shows itself, directly
// or through other scenes: both errors at the scene's line (SceneNames.swift says what only the running
// server can check). A missing image or font file is an error at its line; a file that is there but cannot be decoded (or
// a font FreeType refuses) is refused by the server when it loads the scenes, naming scene and layer.

/// One item of `scenes:`.
struct SceneEntry: Codable {
    var scene: SceneDescription

    init(_ scene: SceneDescription) { self.scene = scene }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, layout, sources, corner, size, margin, gap, background, layers, backup, back
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping with name and layout (or layers), got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        guard let name = try keys.parse(.name, .name) else {
            throw decoder.failure("missing: every scene needs a name (for example interview)", at: CodingKeys.name)
        }
        scene = SceneDescription(name: name, layout: try keys.parse(.layout, .sceneLayout))
        scene.sources = try keys.parseList(.sources, .sourceName) ?? []
        try keys.update(&scene.corner, .corner, .corner)
        try keys.update(&scene.size, .size, .fraction("a fraction of the width", 0.05...1))
        try keys.update(&scene.margin, .margin, .fraction("a fraction of the width", 0...0.4))
        try keys.update(&scene.gap, .gap, .fraction("a fraction of the width", 0...0.2))
        try keys.update(&scene.background, .background, .color)
        if keys.contains(.layers) {
            var items = try keys.nestedUnkeyedContainer(forKey: .layers)
            while !items.isAtEnd { scene.layers.append(try LayerEntry(from: try items.superDecoder()).layer) }
        }
        if let layout = scene.layout, !layout.sourceCount.contains(scene.sources.count) {
            throw decoder.failure(scene.problem ?? "wrong number of sources", at: scene.sources.isEmpty ? CodingKeys.layout : CodingKeys.sources)
        }
        if scene.layout == nil, scene.layers.isEmpty {
            throw decoder.failure("give a layout (\(SceneLayout.allCases.map(\.rawValue).joined(separator: ", "))) or layers",
                                  at: CodingKeys.name)
        }
        if let problem = scene.problem { throw decoder.failure(problem) }
        scene.backup = try keys.backupRule(decoder, backup: .backup, back: .back)
    }

    func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(scene.name, forKey: .name)
        try keys.encodeIfPresent(scene.layout?.rawValue, forKey: .layout)
        if !scene.sources.isEmpty { try keys.encode(scene.sources, forKey: .sources) }
        if scene.layout == .pip {
            try keys.encode(scene.corner.rawValue, forKey: .corner)
            try keys.encode(scene.size, forKey: .size)
            try keys.encode(scene.margin, forKey: .margin)
        }
        if scene.gap > 0 { try keys.encode(scene.gap, forKey: .gap) }
        try keys.encode(scene.background.description, forKey: .background)
        if !scene.layers.isEmpty { try keys.encode(scene.layers.map(LayerEntry.init), forKey: .layers) }
        try keys.encodeIfPresent(scene.backup?.backup, forKey: .backup)
        try keys.encodeIfPresent(scene.backup?.back.rawValue, forKey: .back)
    }
}

/// One item of a scene's `layers:`.
struct LayerEntry: Codable {
    var layer: LayerDescription

    init(_ layer: LayerDescription) { self.layer = layer }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case source, color, image, text, style, rect, crop, fit, z, opacity, border
    }

    enum BorderKeys: String, CodingKey, CaseIterable {
        case width, color
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping with source (or color, image, text) and rect, got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        let given: [CodingKeys] = [.source, .color, .image, .text].filter { keys.contains($0) }
        guard let sourceKey = given.first else {
            throw decoder.failure("missing: what the layer shows (source: a camera, or color, image, text)", at: CodingKeys.source)
        }
        if given.count > 1 { throw decoder.failure("give one of source, color, image and text, not \(given.map(\.stringValue).joined(separator: " and "))", at: given[1]) }
        if keys.contains(.style), sourceKey != .text { throw decoder.failure("style is for text layers", at: CodingKeys.style) }
        let source: LayerSource
        switch sourceKey {
        case .source: source = .camera(try keys.parse(.source, .sourceName) ?? "")
        case .color: source = .color(try keys.parse(.color, .color) ?? .black)
        case .image:
            let written = try keys.parse(.image, .path) ?? "", path = decoder.resolve(written)
            try decoder.check(at: CodingKeys.image) { () throws(ValueError) in try checkFile(path, "image", written: written) }
            source = .image(path)
        default:
            let text = try keys.parse(.text, .text("a text")) ?? ""
            if text.isEmpty { throw decoder.failure("the text is empty", at: CodingKeys.text) }
            var style = TextStyle()
            if keys.contains(.style) { style = try keys.decode(TextStyleEntry.self, forKey: .style).style }
            source = .text(text, style)
        }
        guard let numbers = try keys.parseList(.rect, .number) else {
            throw decoder.failure("missing: where the layer goes (rect: [x, y, width, height])", at: CodingKeys.rect)
        }
        let rect = try decoder.check(at: CodingKeys.rect) { () throws(ValueError) in try Self.rect(numbers) }
        layer = LayerDescription(source: source, rect: rect)
        if let crop = try keys.parseList(.crop, .number) {
            guard crop.count == 4 else { throw decoder.failure("expected [x, y, width, height] in fractions of the source", at: CodingKeys.crop) }
            layer.crop = RelativeRect(x: crop[0], y: crop[1], width: crop[2], height: crop[3])
        }
        if case .image = source { layer.fit = .fit }
        try keys.update(&layer.fit, .fit, .layerFit)
        if let z = try keys.parse(.z, .wholeNumber) { layer.z = z }
        try keys.update(&layer.opacity, .opacity, .fraction("an opacity", 0...1))
        if keys.contains(.border) {
            let border = try keys.nestedContainer(keyedBy: BorderKeys.self, forKey: .border)
            if let width = try border.parse(.width, .wholeNumber) { layer.borderWidth = width }
            try border.update(&layer.borderColor, .color, .color)
        }
        if let problem = layer.problem { throw decoder.failure(problem) }
    }

    /// `[x, y, width, height]`: fractions of the program when every number is at most 1, else pixels.
    static func rect(_ numbers: [Double]) throws(ValueError) -> LayerRect {
        guard numbers.count == 4 else { throw ValueError("expected [x, y, width, height], got \(numbers.count) numbers") }
        let rect: LayerRect
        if numbers.allSatisfy({ $0 <= 1 }) {
            rect = .fraction(RelativeRect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3]))
        } else {
            guard numbers.allSatisfy({ $0 == $0.rounded() && abs($0) < 1e9 }) else {
                throw ValueError("pixels are whole numbers (or give every value as a fraction of the program, at most 1)")
            }
            rect = .pixels(x: Int(numbers[0]), y: Int(numbers[1]), width: Int(numbers[2]), height: Int(numbers[3]))
        }
        if let problem = rect.problem { throw ValueError(problem) }
        return rect
    }

    func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        switch layer.source {
        case .camera(let name): try keys.encode(name, forKey: .source)
        case .color(let color): try keys.encode(color.description, forKey: .color)
        case .image(let path): try keys.encode(path, forKey: .image)
        case let .text(text, style):
            try keys.encode(text, forKey: .text)
            try keys.encode(TextStyleEntry(style), forKey: .style)
        }
        switch layer.rect {
        case let .pixels(x, y, width, height): try keys.encode([x, y, width, height], forKey: .rect)
        case .fraction(let r): try keys.encode([r.x, r.y, r.width, r.height], forKey: .rect)
        }
        if let crop = layer.crop { try keys.encode([crop.x, crop.y, crop.width, crop.height], forKey: .crop) }
        try keys.encode(layer.fit.rawValue, forKey: .fit)
        try keys.encode(layer.z, forKey: .z)
        try keys.encode(layer.opacity, forKey: .opacity)
        if layer.borderWidth > 0 {
            var border = keys.nestedContainer(keyedBy: BorderKeys.self, forKey: .border)
            try border.encode(layer.borderWidth, forKey: .width)
            try border.encode(layer.borderColor.description, forKey: .color)
        }
    }
}

/// `scenes:` — names are unique.
struct SceneList: Decodable {
    var scenes: [SceneDescription] = []

    init(from decoder: any Decoder) throws {
        scenes = try decoder.namedItems("scene", nameKey: SceneEntry.CodingKeys.name, name: \.name) { try SceneEntry(from: $0).scene }
    }
}

extension Decoder {
    /// A list whose items each have a `name` given once (`scenes:`, `overlays:`); `noun` names them in
    /// errors, and a second use of a name points at both lines.
    func namedItems<Item>(_ noun: String, nameKey: any CodingKey, name: (Item) -> String,
                          decode: (any Decoder) throws -> Item) throws -> [Item] {
        var items = try rewording({ "expected a list of \(noun)s, got \($0)" }) { try unkeyedContainer() }
        var nameLines: [String: Int] = [:], result: [Item] = []
        while !items.isAtEnd {
            let item = try items.superDecoder()
            let value = try decode(item)
            if let first = nameLines[name(value)] {
                throw item.failure("the \(noun) name \"\(name(value))\" is already given on line \(first)", at: nameKey)
            }
            nameLines[name(value)] = item.line(at: item.codingPath + [nameKey])
            result.append(value)
        }
        return result
    }
}

/// `transition:` — `kind`, with `frames` or `ms`, and `color` for a dip; a `stinger` with its `clip`
/// (a video with alpha, relative to the config's directory) and `cut_at_ms` instead of a length (it
/// lasts its clip's; the clip is decoded and its length checked at start and on reload).
struct TransitionSection: Codable {
    var spec: TransitionSpec
    /// `ms` as given (turned into frames once the program's rate is known).
    var milliseconds: Int?

    init(spec: TransitionSpec) { self.spec = spec }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case kind, frames, ms, color, clip
        case cutAtMilliseconds = "cut_at_ms"
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping with kind and frames (or ms; clip and cut_at_ms for a stinger), got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        spec = StudioConfiguration.defaultTransition
        try keys.update(&spec.kind, .kind, .transitionKind)
        try keys.update(&spec.frames, .frames, .positive("a number of frames"))
        milliseconds = try keys.parse(.ms, .positive("a number of milliseconds"))
        if milliseconds != nil, keys.contains(.frames) { throw decoder.failure("give frames or ms, not both", at: CodingKeys.ms) }
        try keys.update(&spec.color, .color, .color)
        guard spec.kind == .stinger else {
            for key in [CodingKeys.clip, .cutAtMilliseconds] where keys.contains(key) {
                throw decoder.failure("\(key.stringValue) is for a stinger (kind: stinger)", at: key)
            }
            return
        }
        for key in [CodingKeys.frames, .ms] where keys.contains(key) {
            throw decoder.failure("a stinger lasts its clip's length: give clip and cut_at_ms, not \(key.stringValue)", at: key)
        }
        guard let written = try keys.parse(.clip, .path) else {
            throw decoder.failure("missing: the stinger's clip (clip: FILE, a video with alpha)", at: CodingKeys.clip)
        }
        let path = decoder.resolve(written)
        try decoder.check(at: CodingKeys.clip) { () throws(ValueError) in try checkFile(path, "stinger clip", written: written) }
        guard let cut = try keys.parse(.cutAtMilliseconds, .cutPoint) else {
            throw decoder.failure("missing: where the stinger cuts underneath, in ms from its start (cut_at_ms: 400)", at: CodingKeys.cutAtMilliseconds)
        }
        spec.clip = path
        spec.cutAtMilliseconds = cut
    }

    func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(spec.kind.rawValue, forKey: .kind)
        if spec.kind == .stinger {
            try keys.encode(spec.clip, forKey: .clip)
            try keys.encode(spec.cutAtMilliseconds, forKey: .cutAtMilliseconds)
            return
        }
        try keys.encode(spec.frames, forKey: .frames)
        try keys.encode(spec.color.description, forKey: .color)
    }
}

extension KeyedDecodingContainer {
    /// A sequence under `key`, each item parsed by `syntax`; nil when the key is missing or null.
    func parseList<T>(_ key: Key, _ syntax: ValueSyntax<T>) throws -> [T]? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        let decoder = try superDecoder(forKey: key)
        var items = try decoder.rewording({ "expected a list of \(syntax.noun)s, got \($0)" }) { try decoder.unkeyedContainer() }
        var values: [T] = []
        while !items.isAtEnd { values.append(try items.superDecoder().parse(syntax)) }
        return values
    }
}

extension ValueSyntax where Value == Double {
    /// A number.
    public static var number: Self {
        Self("a number") { (text: String) throws(ValueError) -> Double in
            guard let value = Double(text), value.isFinite else { throw ValueError("expected a number, got \(quoted(text))") }
            return value
        }
    }

    /// A number in `range` (`what` names it: `an opacity`).
    public static func fraction(_ what: String, _ range: ClosedRange<Double>) -> Self {
        Self(what) { (text: String) throws(ValueError) -> Double in
            guard let value = Double(text), range.contains(value) else {
                throw ValueError("expected \(what) from \(range.lowerBound) to \(range.upperBound), got \(quoted(text))")
            }
            return value
        }
    }
}

extension ValueSyntax {
    /// One of an enum's raw values, listing them all when it is none.
    static func oneOf<E: RawRepresentable & CaseIterable & Sendable>(_ noun: String, _ type: E.Type) -> ValueSyntax<E>
        where E.RawValue == String {
        let values = Dictionary(uniqueKeysWithValues: E.allCases.map { ($0.rawValue, $0) })
        let names = E.allCases.map(\.rawValue).joined(separator: ", ")
        return ValueSyntax<E>(noun) { (text: String) throws(ValueError) -> E in
            guard let value = values[text] else { throw ValueError("expected \(noun) (\(names)), got \(quoted(text))") }
            return value
        }
    }
}

extension ValueSyntax where Value == SceneLayout {
    public static var sceneLayout: Self { oneOf("a layout", SceneLayout.self) }
}

extension ValueSyntax where Value == Corner {
    public static var corner: Self { oneOf("a corner", Corner.self) }
}

extension ValueSyntax where Value == LayerFit {
    public static var layerFit: Self { oneOf("a fit", LayerFit.self) }
}

extension ValueSyntax where Value == BackMode {
    public static var backMode: Self { oneOf("back", BackMode.self) }
}

extension KeyedDecodingContainer {
    /// A pin's or scene's `backup: NAME` with `back: auto|manual` (default manual); `back` alone is refused.
    func backupRule(_ decoder: any Decoder, backup: Key, back: Key) throws -> BackupRule? {
        let name = try parse(backup, .sourceName), mode = try parse(back, .backMode)
        guard let name else {
            if mode != nil { throw decoder.failure("back needs a backup: the camera or scene to cut to (backup: NAME)", at: back) }
            return nil
        }
        return BackupRule(backup: name, back: mode ?? .manual)
    }
}

extension ValueSyntax where Value == TransitionKind {
    /// Also what `studio transition` and `studio auto` take.
    public static var transitionKind: Self { oneOf("a transition", TransitionKind.self) }
}

extension ValueSyntax where Value == RGBColor {
    /// `#RRGGBB` or a colour's name.
    public static var color: Self {
        Self("a colour") { (text: String) throws(ValueError) -> RGBColor in
            guard let color = RGBColor(parsing: text) else {
                throw ValueError("expected a colour (#RRGGBB or \(RGBColor.names.map(\.name).joined(separator: ", "))), got \(quoted(text))")
            }
            return color
        }
    }
}
