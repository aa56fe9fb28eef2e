/// Why an image or a text could not become a picture, in the operator's words: `description` names the
/// file as the config wrote it and says what to do about it. Loading fails; nothing on air changes.
public enum GraphicsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No file at `path`.
    case imageNotFound(path: String)
    /// The file cannot be opened or read (a directory, no permission): `reason` is the system's.
    case imageUnreadable(path: String, reason: String)
    /// The file is not a PNG or JPEG, or libavcodec could not decode it (`reason` says which).
    case notAnImage(path: String, reason: String)
    /// The picture or the file is bigger than `GraphicsLimits` allows: `what` is its size.
    case imageTooLarge(path: String, what: String, limit: String)
    /// A picture size asked for (scaling an image, a solid colour) outside 1...`GraphicsLimits.maxSide`.
    case badSize(width: Int, height: Int)
    /// FreeType could not open the font file or use it: `reason` is FreeType's.
    case fontNotLoaded(path: String, reason: String)
    /// The text style cannot be rendered (`TextStyle.problem`).
    case badStyle(String)
    /// The rendered text would be bigger than `GraphicsLimits.maxSide` on a side.
    case textTooLarge(width: Int, height: Int)
    /// Decoding or converting a picture failed for a reason that is not the file's (no decoder in this
    /// libavcodec, out of memory): `reason` is the FFmpeg call and its error.
    case imageFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case .imageNotFound(let path): "image '\(path)' not found"
        case .imageUnreadable(let path, let reason): "image '\(path)' cannot be read: \(reason)"
        case .notAnImage(let path, let reason): "'\(path)' is not a PNG or JPEG image: \(reason)"
        case .imageTooLarge(let path, let what, let limit): "image '\(path)' is too large: \(what) (the limit is \(limit))"
        case .badSize(let width, let height):
            "picture size \(width)x\(height) is outside 1x1...\(GraphicsLimits.maxSide)x\(GraphicsLimits.maxSide)"
        case .fontNotLoaded(let path, let reason): "font '\(path)' cannot be loaded: \(reason)"
        case .badStyle(let problem): problem
        case .textTooLarge(let width, let height):
            "the text would be \(width)x\(height) pixels: too large (the limit is \(GraphicsLimits.maxSide)x\(GraphicsLimits.maxSide))"
        case .imageFailed(let path, let reason): "image '\(path)' cannot be loaded: \(reason)"
        }
    }
}

/// Bounds on what Graphics makes, so a wrong file or a runaway text cannot exhaust memory at load.
public enum GraphicsLimits {
    /// The widest and tallest picture (image, text, solid colour) in pixels.
    public static let maxSide = 8192
    /// The largest image file read, in bytes (256 MiB: a worst-case uncompressed 8192x8192 RGBA PNG).
    public static let maxFileBytes = 256 << 20

    /// Whether a picture of this size is allowed.
    static func allows(width: Int, height: Int) -> Bool { (1...maxSide).contains(width) && (1...maxSide).contains(height) }
}
