import CV4L2
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// Focus and exposure on a point of the picture (the seeds' tap-to-focus), with the controls the device
/// has: the UVC region of interest (V4L2_CID_UVC_REGION_OF_INTEREST_RECT and _AUTO), else one autofocus
/// run (V4L2_CID_AUTO_FOCUS_START), else continuous autofocus (V4L2_CID_FOCUS_AUTO); and automatic
/// exposure (V4L2_CID_EXPOSURE_AUTO) with each.
extension V4L2Device {
    public func focus(at point: FocusPoint) throws(CaptureError) -> FocusOutcome {
        let available = focusControls()
        let method = available.method
        var outcome = FocusOutcome(method: method, reason: available.reason)
        do {
            // Exposure first: the region's auto-exposure bit and the autofocus run assume it is automatic.
            if let exposure = available.exposure {
                try setValue(cv4l2_cid_exposure_auto(), exposure.value, "exposure_auto")
                outcome.exposure = exposure.name
            }
            switch method {
            case .regionOfInterest:
                guard let bounds = available.regionBounds else { break }
                let rect = FocusControls.region(around: point, bounds: bounds, minimum: available.regionMinimum)
                try syscall("VIDIOC_S_EXT_CTRLS region of interest") {
                    cv4l2_set_rect_control(fd, cv4l2_cid_roi_rect(), Int32(rect.left), Int32(rect.top), UInt32(rect.width), UInt32(rect.height))
                }
                outcome.region = [rect.left, rect.top, rect.width, rect.height]
                if let mask = available.regionAutoMask {
                    let wanted = Int64(cv4l2_roi_auto_focus()) | (outcome.exposure != nil ? Int64(cv4l2_roi_auto_exposure()) : 0)
                    try setValue(cv4l2_cid_roi_auto(), wanted & mask, "region_of_interest_auto_controls")
                }
                if available.hasContinuousAutofocus { try setValue(cv4l2_cid_focus_auto(), 1, "focus_automatic_continuous") }
            case .oneShotAutofocus:
                // A run while continuous autofocus is on is undefined (V4L2 camera controls): switch it off first.
                if available.hasContinuousAutofocus { try setValue(cv4l2_cid_focus_auto(), 0, "focus_automatic_continuous") }
                try setValue(cv4l2_cid_auto_focus_start(), 1, "auto_focus_start")
            case .continuousAutofocus:
                try setValue(cv4l2_cid_focus_auto(), 1, "focus_automatic_continuous")
            case .none:
                break
            }
        } catch {
            throw CaptureError(camera: nil, message: "the device refused to focus: \(error)")
        }
        return outcome
    }

    /// The focus and exposure controls present, writable and enabled.
    func focusControls() -> FocusControls {
        var found = FocusControls()
        if let rect = query(cv4l2_cid_roi_rect()), rect.type == cv4l2_ctrl_type_rect() {
            var left: Int32 = 0, top: Int32 = 0, width: UInt32 = 0, height: UInt32 = 0
            if cv4l2_get_rect_control(fd, cv4l2_cid_roi_rect(), 2, &left, &top, &width, &height) == 0, width > 0, height > 0 {
                found.regionBounds = (Int(width), Int(height))
                if cv4l2_get_rect_control(fd, cv4l2_cid_roi_rect(), 1, &left, &top, &width, &height) == 0 {
                    found.regionMinimum = (Int(max(width, 1)), Int(max(height, 1)))
                }
            }
        }
        if let auto = query(cv4l2_cid_roi_auto()), auto.type == V4L2_CTRL_TYPE_BITMASK.rawValue { found.regionAutoMask = auto.maximum }
        found.hasAutoFocusStart = query(cv4l2_cid_auto_focus_start()) != nil
        found.hasContinuousAutofocus = query(cv4l2_cid_focus_auto()) != nil
        if let exposure = query(cv4l2_cid_exposure_auto()), exposure.type == V4L2_CTRL_TYPE_MENU.rawValue,
           exposure.minimum >= 0, exposure.maximum < 64 {
            // Menus may have holes (a UVC webcam offers 1 manual and 3 aperture priority only).
            found.exposureModes = (exposure.minimum...exposure.maximum).filter {
                cv4l2_query_menu(fd, cv4l2_cid_exposure_auto(), UInt32($0), nil, nil) == 0
            }
        }
        return found
    }

    /// Control `id` when the device has it enabled and writable; nil otherwise.
    private func query(_ id: UInt32) -> v4l2_query_ext_ctrl? {
        var query = v4l2_query_ext_ctrl()
        query.id = id
        do { try ioctl("VIDIOC_QUERY_EXT_CTRL", cv4l2_vidioc_query_ext_ctrl(), &query) } catch { return nil }
        guard query.id == id else { return nil }
        let unusable = UInt32(V4L2_CTRL_FLAG_DISABLED) | UInt32(V4L2_CTRL_FLAG_READ_ONLY)
        return query.flags & unusable == 0 ? query : nil
    }

    private func setValue(_ id: UInt32, _ value: Int64, _ name: String) throws(SystemError) {
        try syscall("VIDIOC_S_EXT_CTRLS \(name)=\(value)") { cv4l2_set_control(fd, id, 0, value) }
    }
}
