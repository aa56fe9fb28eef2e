import StudioCore

/// A camera whose mode (size, frame rate) and controls (brightness, focus, exposure...) can be changed
/// while it runs. The server talks to cameras through this protocol, never through a backend's types.
public protocol AdjustableCamera: Camera {
    /// The device's controls with their ranges, menus and current values.
    func controls() throws(CaptureError) -> [CameraControl]
    /// Sets control `name` (as listed by `controls()`) to `value`: a number, `true`/`false`/`on`/`off`
    /// for booleans, or a menu item's name or index. Returns the control as it is afterwards.
    /// - Throws: `CaptureError` for an unknown control, a value out of range or not in the menu, a
    ///   read-only or inactive control, or a device that refuses.
    @discardableResult
    func setControl(_ name: String, to value: String) throws(CaptureError) -> CameraControl
    /// Asks for a new size and/or frame rate (nil keeps the current one). Returns what the device
    /// granted, which may differ (the nearest size or rate it offers). Works while running (the capture
    /// session restarts its stream) and before `start()` (the mode is used when it starts).
    @discardableResult
    func setMode(_ request: CameraModeRequest) throws(CaptureError) -> CameraFormat
    /// Asks the camera to focus and expose on `point` of its picture, with the best control it has (see
    /// `FocusOutcome.Method`); says which it used, or `none` and why.
    /// - Throws: `CaptureError` when the device refuses a control it offers.
    func focus(at point: FocusPoint) throws(CaptureError) -> FocusOutcome
}

/// A requested size and/or frame rate; nil fields keep what the camera has.
public struct CameraModeRequest: Sendable, Hashable, Codable, CustomStringConvertible {
    public var width: Int?
    public var height: Int?
    public var frameRate: Rational?

    public init(width: Int? = nil, height: Int? = nil, frameRate: Rational? = nil) {
        self.width = width
        self.height = height
        self.frameRate = frameRate
    }

    public var description: String {
        var parts: [String] = []
        if let width, let height { parts.append("\(width)x\(height)") }
        if let frameRate { parts.append("\(frameRate) fps") }
        return parts.isEmpty ? "no change" : parts.joined(separator: " ")
    }
}

/// One camera control as the device describes it.
public struct CameraControl: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable {
        case integer, boolean, menu, integerMenu = "integer_menu", button, integer64, string, bitmask, other
    }

    public struct MenuItem: Sendable, Hashable, Codable {
        public var index: Int64
        /// The item's text (for an integer menu: its value as text).
        public var name: String
        public init(index: Int64, name: String) {
            self.index = index
            self.name = name
        }
    }

    /// Name to set it by: the device's name in lower case with `_` for spaces and punctuation, as
    /// v4l2-ctl shows it (`brightness`, `focus_automatic_continuous`, `test_pattern`).
    public var name: String
    /// The device's own name (`Brightness`).
    public var label: String
    public var kind: Kind
    public var minimum: Int64
    public var maximum: Int64
    public var step: Int64
    public var defaultValue: Int64
    /// Current value; nil for buttons, write-only and string controls.
    public var value: Int64?
    /// Menu items (menus and integer menus only).
    public var menu: [MenuItem]
    public var isReadOnly: Bool
    /// The device ignores this control in its current state (for example manual exposure while auto
    /// exposure is on).
    public var isInactive: Bool

    public init(name: String, label: String, kind: Kind, minimum: Int64, maximum: Int64, step: Int64, defaultValue: Int64,
                value: Int64?, menu: [MenuItem] = [], isReadOnly: Bool = false, isInactive: Bool = false) {
        self.name = name
        self.label = label
        self.kind = kind
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.value = value
        self.menu = menu
        self.isReadOnly = isReadOnly
        self.isInactive = isInactive
    }

    /// The current value as text: a menu item's name, `true`/`false`, or the number.
    public var valueText: String? {
        guard let value else { return nil }
        switch kind {
        case .boolean: return value != 0 ? "true" : "false"
        case .menu, .integerMenu: return menu.first { $0.index == value }?.name ?? "\(value)"
        default: return "\(value)"
        }
    }

    /// One line for `studio controls`: `brightness (integer) = 128 [0...255 step 1, default 128]`.
    public var summary: String {
        var text = "\(name) (\(kind.rawValue))"
        if let valueText { text += " = \(valueText)" }
        switch kind {
        case .integer, .integer64, .bitmask: text += " [\(minimum)...\(maximum) step \(step), default \(defaultValue)]"
        case .boolean: text += " [default \(defaultValue != 0)]"
        case .menu, .integerMenu:
            text += " [" + menu.map { "\($0.index): \($0.name)" }.joined(separator: ", ") + "]"
        default: break
        }
        if isReadOnly { text += " read-only" }
        if isInactive { text += " inactive" }
        return text
    }
}
