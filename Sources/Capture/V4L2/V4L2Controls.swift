import CV4L2
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

extension V4L2Device {
    /// The device's controls (VIDIOC_QUERY_EXT_CTRL over every control, VIDIOC_QUERYMENU for menus),
    /// with current values. Control-class headings, disabled and compound controls are left out.
    public func controls() throws(SystemError) -> [CameraControl] {
        try queryControls().map(\.control)
    }

    /// Sets control `name` to `text` (see `AdjustableCamera.setControl`) and returns it as it is afterwards.
    public func setControl(_ name: String, to text: String) throws(CaptureError) -> CameraControl {
        let all: [(id: UInt32, control: CameraControl)]
        do { all = try queryControls() } catch { throw CaptureError(camera: nil, message: "cannot list the controls of \(path): \(error)") }
        guard let (id, control) = all.first(where: { $0.control.name == name }) else {
            throw CaptureError(camera: nil, message: "unknown control '\(name)'; this camera has: \(all.map(\.control.name).joined(separator: ", "))")
        }
        if control.isReadOnly { throw CaptureError(camera: nil, message: "control '\(name)' is read-only") }
        if control.isInactive {
            throw CaptureError(camera: nil, message: "control '\(name)' is inactive now (another control, such as an automatic mode, overrides it)")
        }
        let value = try Self.parse(text, for: control)
        do {
            try syscall("VIDIOC_S_EXT_CTRLS") { cv4l2_set_control(fd, id, control.kind == .integer64 ? 1 : 0, value) }
        } catch {
            let reason: String = switch error.errno {
            case ERANGE: "value \(value) is out of range"
            case EACCES: "the control is read-only"
            case EBUSY: "the control is busy (the device may not allow it while streaming)"
            case EINVAL: "the device refused the value \(value)"
            default: "\(error)"
            }
            throw CaptureError(camera: nil, message: "cannot set '\(name)': \(reason)")
        }
        do {
            guard let updated = try queryControls().first(where: { $0.id == id }) else { return control }
            return updated.control
        } catch {
            throw CaptureError(camera: nil, message: "'\(name)' was set, but reading it back failed: \(error)")
        }
    }

    static func parse(_ text: String, for control: CameraControl) throws(CaptureError) -> Int64 {
        let trimmed = text.v4l2TrimmingWhitespace
        let value: Int64
        switch control.kind {
        case .button:
            return 1
        case .boolean:
            switch trimmed.lowercased() {
            case "1", "true", "on", "yes": value = 1
            case "0", "false", "off", "no": value = 0
            default: throw CaptureError(camera: nil, message: "'\(control.name)' is a boolean: use true/false (or 1/0), not '\(text)'")
            }
        case .menu, .integerMenu:
            if let item = control.menu.first(where: { $0.name.lowercased() == trimmed.lowercased() || $0.name.v4l2ControlName == trimmed.v4l2ControlName }) {
                value = item.index
            } else if let index = Int64(trimmed), control.menu.contains(where: { $0.index == index }) {
                value = index
            } else {
                let items = control.menu.map { "\($0.index) (\($0.name))" }.joined(separator: ", ")
                throw CaptureError(camera: nil, message: "'\(text)' is not in the menu of '\(control.name)': \(items)")
            }
        case .integer, .integer64, .bitmask:
            guard let number = Int64(trimmed) else {
                throw CaptureError(camera: nil, message: "'\(control.name)' takes a whole number, not '\(text)'")
            }
            value = number
        case .string, .other:
            throw CaptureError(camera: nil, message: "'\(control.name)' is a \(control.kind.rawValue) control, which studio does not set")
        }
        let step = max(control.step, 1)
        if value < control.minimum || value > control.maximum || (control.kind != .bitmask && (value - control.minimum) % step != 0) {
            let stepText = step == 1 ? "" : " in steps of \(step)"
            throw CaptureError(camera: nil, message: "\(value) is out of range for '\(control.name)': \(control.minimum)...\(control.maximum)\(stepText)")
        }
        return value
    }

    func queryControls() throws(SystemError) -> [(id: UInt32, control: CameraControl)] {
        var result: [(UInt32, CameraControl)] = []
        var query = v4l2_query_ext_ctrl()
        query.id = UInt32(V4L2_CTRL_FLAG_NEXT_CTRL)
        while true {
            do {
                try ioctl("VIDIOC_QUERY_EXT_CTRL", cv4l2_vidioc_query_ext_ctrl(), &query)
            } catch let failure where failure.errno == EINVAL {
                break
            }
            let id = query.id
            defer {
                let next = query.id
                query = v4l2_query_ext_ctrl()
                query.id = next | UInt32(V4L2_CTRL_FLAG_NEXT_CTRL)
            }
            let flags = query.flags
            if flags & UInt32(V4L2_CTRL_FLAG_DISABLED) != 0 || query.type == V4L2_CTRL_TYPE_CTRL_CLASS.rawValue { continue }
            if query.type >= 0x0100 { continue }  // compound controls (areas, codec parameters)
            let kind: CameraControl.Kind = switch query.type {
            case V4L2_CTRL_TYPE_INTEGER.rawValue: .integer
            case V4L2_CTRL_TYPE_BOOLEAN.rawValue: .boolean
            case V4L2_CTRL_TYPE_MENU.rawValue: .menu
            case V4L2_CTRL_TYPE_INTEGER_MENU.rawValue: .integerMenu
            case V4L2_CTRL_TYPE_BUTTON.rawValue: .button
            case V4L2_CTRL_TYPE_INTEGER64.rawValue: .integer64
            case V4L2_CTRL_TYPE_STRING.rawValue: .string
            case V4L2_CTRL_TYPE_BITMASK.rawValue: .bitmask
            default: .other
            }
            var menu: [CameraControl.MenuItem] = []
            if kind == .menu || kind == .integerMenu, query.minimum >= 0, query.maximum < 1024 {
                for index in query.minimum...query.maximum {
                    var name = [CChar](repeating: 0, count: 33)
                    var number: Int64 = 0
                    // Menus may have holes: QUERYMENU fails with EINVAL for indices that are not items.
                    guard cv4l2_query_menu(fd, id, UInt32(index), &name, &number) == 0 else { continue }
                    let text = kind == .menu ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "\(number)"
                    menu.append(CameraControl.MenuItem(index: index, name: text))
                }
            }
            var value: Int64?
            let readable = flags & UInt32(V4L2_CTRL_FLAG_WRITE_ONLY) == 0
            if readable, kind != .button, kind != .string, kind != .other {
                var current: Int64 = 0
                if cv4l2_get_control(fd, id, kind == .integer64 ? 1 : 0, &current) == 0 { value = current }
            }
            let label = Self.string(query.name)
            result.append((id, CameraControl(
                name: label.v4l2ControlName, label: label, kind: kind, minimum: query.minimum, maximum: query.maximum,
                step: Int64(clamping: query.step), defaultValue: query.default_value, value: value, menu: menu,
                isReadOnly: flags & UInt32(V4L2_CTRL_FLAG_READ_ONLY) != 0,
                isInactive: flags & UInt32(V4L2_CTRL_FLAG_INACTIVE) != 0)))
        }
        return result
    }
}

extension String {
    /// `Focus, Automatic Continuous` -> `focus_automatic_continuous` (what v4l2-ctl shows).
    var v4l2ControlName: String {
        var name = ""
        for character in lowercased() {
            if character.isLetter || character.isNumber, character.isASCII {
                name.append(character)
            } else if !name.isEmpty, name.last != "_" {
                name.append("_")
            }
        }
        while name.last == "_" { name.removeLast() }
        return name
    }

    var v4l2TrimmingWhitespace: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
