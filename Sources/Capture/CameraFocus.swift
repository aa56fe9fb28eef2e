import StudioCore

/// A point of a camera's picture to focus and expose on, in fractions of the picture: (0, 0) is the
/// top left corner, (1, 1) the bottom right, (0.5, 0.5) the centre (the seeds' tap-to-focus point of
/// interest, as the operator clicks it on the picture).
public struct FocusPoint: Sendable, Hashable, CustomStringConvertible {
    public var x: Double
    public var y: Double

    /// Nil unless both are finite and within 0...1.
    public init?(x: Double, y: Double) {
        guard x.isFinite, y.isFinite, (0...1).contains(x), (0...1).contains(y) else { return nil }
        self.x = x
        self.y = y
    }

    public var description: String { "(\(x), \(y))" }
}

/// How a camera focused (and exposed) on a point: what it could do, exactly.
public struct FocusOutcome: Sendable, Hashable {
    public enum Method: String, Sendable, CaseIterable {
        /// A region-of-interest control placed around the point (UVC 1.5 cameras): focus and exposure
        /// follow that region.
        case regionOfInterest = "roi"
        /// One autofocus run (V4L2_CID_AUTO_FOCUS_START) on the whole picture: the camera cannot be pointed.
        case oneShotAutofocus = "one_shot_autofocus"
        /// Continuous autofocus switched on (the usual webcam): it refocuses by itself, on what it judges.
        case continuousAutofocus = "continuous_autofocus"
        /// Nothing: `reason` says why.
        case none
    }

    public var method: Method
    /// The automatic exposure mode set (`auto`, `aperture_priority`), or nil when the camera has none.
    public var exposure: String?
    /// The region set, `[left, top, width, height]` in the sensor's pixels (`roi` only).
    public var region: [Int]?
    /// Why not more (what the camera lacks); nil for `roi`.
    public var reason: String?

    public init(method: Method, exposure: String? = nil, region: [Int]? = nil, reason: String? = nil) {
        self.method = method
        self.exposure = exposure
        self.region = region
        self.reason = reason
    }
}

/// Which focus and exposure controls a device has, and what to do with them: the decision, apart from
/// the ioctls (so it can be checked for every kind of camera without one).
struct FocusControls: Sendable {
    /// A writable region-of-interest rectangle, with the largest rectangle it takes (the sensor).
    var regionBounds: (width: Int, height: Int)?
    /// The smallest rectangle it takes.
    var regionMinimum: (width: Int, height: Int) = (1, 1)
    /// The region-of-interest auto bitmask's supported bits, when it has one.
    var regionAutoMask: Int64?
    var hasAutoFocusStart = false
    var hasContinuousAutofocus = false
    /// The automatic exposure modes its exposure menu offers, by V4L2 value (`V4L2_EXPOSURE_AUTO` 0,
    /// `V4L2_EXPOSURE_APERTURE_PRIORITY` 3).
    var exposureModes: [Int64] = []

    /// The focus method, best first: a region of interest, else one autofocus run, else continuous
    /// autofocus; `none` with the reason when the device has none of them.
    var method: FocusOutcome.Method {
        if regionBounds != nil { return .regionOfInterest }
        if hasAutoFocusStart { return .oneShotAutofocus }
        if hasContinuousAutofocus { return .continuousAutofocus }
        return .none
    }

    /// The automatic exposure mode to set: full auto where offered, else aperture priority (automatic
    /// exposure time, as UVC webcams offer it); nil without either.
    var exposure: (value: Int64, name: String)? {
        if exposureModes.contains(0) { return (0, "auto") }
        if exposureModes.contains(3) { return (3, "aperture_priority") }
        return nil
    }

    /// What the camera lacks, for the reply (nil for `roi`).
    var reason: String? {
        switch method {
        case .regionOfInterest: return nil
        case .oneShotAutofocus: return "no region-of-interest control: one autofocus run on the whole picture"
        case .continuousAutofocus:
            return "no region-of-interest or one-shot autofocus control: continuous autofocus switched on, it focuses where it judges"
        case .none:
            return exposure == nil ? "the device has no region-of-interest, autofocus or automatic exposure control"
                : "the device has no region-of-interest or autofocus control (automatic exposure switched on)"
        }
    }

    /// The region-of-interest rectangle around `point`: an eighth of the sensor each way (at least the
    /// smallest the device takes), centred on the point and moved inside the sensor at its edges.
    static func region(around point: FocusPoint, bounds: (width: Int, height: Int),
                       minimum: (width: Int, height: Int)) -> (left: Int, top: Int, width: Int, height: Int) {
        let width = min(max(bounds.width / 8, minimum.width, 1), bounds.width)
        let height = min(max(bounds.height / 8, minimum.height, 1), bounds.height)
        let centreX = Int((point.x * Double(bounds.width)).rounded()), centreY = Int((point.y * Double(bounds.height)).rounded())
        let left = min(max(centreX - width / 2, 0), bounds.width - width)
        let top = min(max(centreY - height / 2, 0), bounds.height - height)
        return (left, top, width, height)
    }
}
