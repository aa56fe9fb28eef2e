import StudioCore

/// A picture with coverage, as the compositor layers it: I420 colour plus, where the picture has
/// transparency (a PNG logo, a text box, a layer's opacity), a full-resolution alpha plane.
public struct KeyedPicture: Sendable {
    /// The colour, always `.i420`.
    public var picture: VideoFrame
    /// One byte per pixel, `picture.width * picture.height`, row after row without padding:
    /// 0 transparent, 255 opaque. Nil: opaque everywhere.
    public var alpha: [UInt8]?

    public init(picture: VideoFrame, alpha: [UInt8]?) {
        precondition(picture.format == .i420, "a keyed picture is I420")
        precondition(alpha.map { $0.count == picture.width * picture.height } ?? true, "alpha plane size")
        self.picture = picture
        self.alpha = alpha
    }

    public var width: Int { picture.width }
    public var height: Int { picture.height }
}
