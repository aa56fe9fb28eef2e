import CFreeType
import FrameDrawing
import StudioCore
import Synchronization

/// Renders texts (titles, name captions) with FreeType into pictures the compositor layers: the
/// letters' coverage (anti-aliased) over an optional box becomes the alpha plane. Each text and style is
/// rendered once and kept (the last `cacheLimit` of them), so a caption costs nothing per frame; render
/// when the text or its style changes (config load, a command), never on the program thread's clock.
///
/// Loaded fonts are kept by path. FreeType objects are not thread-safe: all of them are used only
/// inside the one lock, so a renderer can be shared between threads.
public final class TextRenderer: Sendable {
    /// How many rendered texts are kept; the oldest goes first.
    public static let cacheLimit = 32

    private let state = Mutex(FontState())

    public init() {}

    deinit {
        state.withLock { state in
            for face in state.faces.values { FT_Done_Face(face) }
            if let library = state.library { FT_Done_FreeType(library) }
        }
    }

    /// `text` (UTF-8; lines separated by newlines) in `style`: the rendered picture, from the cache when
    /// this text in this style was rendered before.
    public func render(_ text: String, style: TextStyle) throws(GraphicsError) -> KeyedPicture {
        if let problem = style.problem { throw .badStyle(problem) }
        let key = RenderedText(text: text, style: style)
        return try state.withLock { (state: inout FontState) throws(GraphicsError) -> KeyedPicture in
            if let cached = state.rendered[key] { return cached }
            let face = try state.face(style.font)
            let picture = try TextLayout(text, face: face, style: style).picture()
            state.remember(picture, for: key)
            return picture
        }
    }

    /// How many texts are cached now (tests check that a text is rendered once).
    public var cachedCount: Int { state.withLock { $0.rendered.count } }
}

/// What a cached picture was rendered from.
private struct RenderedText: Hashable {
    var text: String
    var style: TextStyle
}

/// The renderer's FreeType objects and cache, only ever touched inside `TextRenderer`'s lock.
private struct FontState {
    var library: FT_Library?
    var faces: [String: FT_Face] = [:]
    var rendered: [RenderedText: KeyedPicture] = [:]
    var order: [RenderedText] = []

    /// The font at `path`, loaded on first use. A font that fails is not kept: the next render tries again.
    mutating func face(_ path: String) throws(GraphicsError) -> FT_Face {
        if let face = faces[path] { return face }
        if library == nil {
            var created: FT_Library?
            let error = FT_Init_FreeType(&created)
            guard error == 0, let created else {
                throw .fontNotLoaded(path: path, reason: "FreeType cannot start: \(freeTypeReason(error))")
            }
            library = created
        }
        var loaded: FT_Face?
        let error = FT_New_Face(library, path, 0, &loaded)
        guard error == 0, let loaded else { throw .fontNotLoaded(path: path, reason: freeTypeReason(error)) }
        faces[path] = loaded
        return loaded
    }

    mutating func remember(_ picture: KeyedPicture, for key: RenderedText) {
        if order.count >= TextRenderer.cacheLimit { rendered[order.removeFirst()] = nil }
        rendered[key] = picture
        order.append(key)
    }
}

/// FreeType's text for an error code ("cannot open resource"), or its number when FreeType has none.
func freeTypeReason(_ error: FT_Error) -> String {
    cft_error_string(error).map { String(cString: $0) } ?? "FreeType error \(error)"
}
