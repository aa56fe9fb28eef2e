import Foundation
import StudioCore

// `overlays:` and the `style:` of a text layer (SceneSection.swift's header shows both).

/// One item of `overlays:`.
struct OverlayEntry: Codable {
    var overlay: OverlayDescription

    init(_ overlay: OverlayDescription) { self.overlay = overlay }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, on, layers
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping with name and layers, got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        guard let name = try keys.parse(.name, .name) else {
            throw decoder.failure("missing: every overlay needs a name (for example logo)", at: CodingKeys.name)
        }
        overlay = OverlayDescription(name: name, layers: [], on: try keys.parse(.on, .boolean) ?? false)
        if keys.contains(.layers) {
            var items = try keys.nestedUnkeyedContainer(forKey: .layers)
            while !items.isAtEnd { overlay.layers.append(try LayerEntry(from: try items.superDecoder()).layer) }
        }
        if overlay.layers.isEmpty { throw decoder.failure("missing: the overlay's layers (image, text, color or source)", at: CodingKeys.layers) }
        if let problem = overlay.problem { throw decoder.failure(problem) }
    }

    func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(overlay.name, forKey: .name)
        try keys.encode(overlay.on, forKey: .on)
        try keys.encode(overlay.layers.map(LayerEntry.init), forKey: .layers)
    }
}

/// `overlays:` — names are unique.
struct OverlayList: Decodable {
    var overlays: [OverlayDescription] = []

    init(from decoder: any Decoder) throws {
        overlays = try decoder.namedItems("overlay", nameKey: OverlayEntry.CodingKeys.name, name: \.name) { try OverlayEntry(from: $0).overlay }
    }
}

/// A text layer's `style:`.
struct TextStyleEntry: Codable {
    var style: TextStyle

    init(_ style: TextStyle) { self.style = style }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case font, size, color, box, padding, align
        case boxOpacity = "box_opacity"
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.rewording({ "expected a mapping (font, size, color, box, box_opacity, padding, align), got \($0)" }) {
            try decoder.container(keyedBy: CodingKeys.self)
        }
        style = TextStyle()
        if let font = try keys.parse(.font, .path) {
            let path = decoder.resolve(font)
            try decoder.check(at: CodingKeys.font) { () throws(ValueError) in try checkFile(path, "font", written: font) }
            style.font = path
        }
        if let size = try keys.parse(.size, .positive("a size in pixels")) {
            guard TextStyle.sizes.contains(size) else {
                throw decoder.failure("text size must be between \(TextStyle.sizes.lowerBound) and \(TextStyle.sizes.upperBound) pixels, got \(size)",
                                      at: CodingKeys.size)
            }
            style.size = size
        }
        try keys.update(&style.color, .color, .color)
        style.box = try keys.parse(.box, .color)
        try keys.update(&style.boxOpacity, .boxOpacity, .fraction("an opacity", 0...1))
        if let padding = try keys.parse(.padding, .number) {
            guard padding == padding.rounded(), TextStyle.paddings.contains(Int(padding)) else {
                throw decoder.failure("padding must be whole pixels from \(TextStyle.paddings.lowerBound) to \(TextStyle.paddings.upperBound), got \(padding)",
                                      at: CodingKeys.padding)
            }
            style.padding = Int(padding)
        }
        try keys.update(&style.alignment, .align, .oneOf("an alignment", TextAlignment.self))
        if let problem = style.problem { throw decoder.failure(problem) }
    }

    func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(style.font, forKey: .font)
        try keys.encode(style.size, forKey: .size)
        try keys.encode(style.color.description, forKey: .color)
        try keys.encodeIfPresent(style.box?.description, forKey: .box)
        try keys.encode(style.boxOpacity, forKey: .boxOpacity)
        try keys.encode(style.padding, forKey: .padding)
        try keys.encode(style.alignment.rawValue, forKey: .align)
    }
}

/// Refuses a file the server could not open: missing, a directory, or unreadable. (Whether it decodes
/// as an image, or loads as a font, is known only when the server loads it.)
/// `written` is the path as the config gives it, `path` where it leads.
func checkFile(_ path: String, _ what: String, written: String) throws(ValueError) {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw ValueError("\(what) '\(written)' not found" + (written == path ? "" : " (no file \(path))"))
    }
    if isDirectory.boolValue { throw ValueError("\(what) '\(path)' is a directory, not a file") }
    guard FileManager.default.isReadableFile(atPath: path) else { throw ValueError("\(what) '\(path)' cannot be read: permission denied") }
}
