import CV4L2
import Testing
@testable import Capture

/// Which focus method a device's controls give, and where the region of interest goes: the decision
/// `V4L2Device.focus(at:)` acts on, for every kind of camera (the host has no V4L2 device; vivid has
/// none of these controls).
@Suite struct FocusControlsTests {
    @Test func pointsOutsideThePictureAreRefused() {
        #expect(FocusPoint(x: 0, y: 1) != nil && FocusPoint(x: 0.5, y: 0.5) != nil)
        #expect(FocusPoint(x: -0.01, y: 0.5) == nil)
        #expect(FocusPoint(x: 0.5, y: 1.01) == nil)
        #expect(FocusPoint(x: .nan, y: 0.5) == nil)
        #expect(FocusPoint(x: 0.5, y: .infinity) == nil)
    }

    @Test func theBestMethodTheDeviceHasIsChosenAndTheReplySaysWhyNotBetter() {
        var controls = FocusControls()
        #expect(controls.method == .none && controls.exposure == nil)
        #expect(controls.reason?.contains("no region-of-interest, autofocus or automatic exposure control") == true)

        controls.exposureModes = [1, 3]  // a UVC webcam: manual and aperture priority only
        #expect(controls.method == .none && controls.exposure?.name == "aperture_priority" && controls.exposure?.value == 3)
        #expect(controls.reason?.contains("automatic exposure switched on") == true)
        controls.exposureModes = [0, 1, 2, 3]
        #expect(controls.exposure?.name == "auto" && controls.exposure?.value == 0)

        controls.hasContinuousAutofocus = true
        #expect(controls.method == .continuousAutofocus && controls.reason?.contains("continuous autofocus") == true)
        controls.hasAutoFocusStart = true
        #expect(controls.method == .oneShotAutofocus && controls.reason?.contains("one autofocus run") == true)
        controls.regionBounds = (1920, 1080)
        #expect(controls.method == .regionOfInterest && controls.reason == nil)
        #expect(FocusOutcome.Method.allCases.map(\.rawValue) == ["roi", "one_shot_autofocus", "continuous_autofocus", "none"])
    }

    @Test func theRegionIsCentredOnThePointAndStaysOnTheSensor() {
        let sensor = (width: 1920, height: 1080)
        let centre = FocusControls.region(around: FocusPoint(x: 0.5, y: 0.5)!, bounds: sensor, minimum: (1, 1))
        #expect(centre == (left: 840, top: 473, width: 240, height: 135))
        let corner = FocusControls.region(around: FocusPoint(x: 0, y: 1)!, bounds: sensor, minimum: (1, 1))
        #expect(corner == (left: 0, top: 945, width: 240, height: 135), "moved inside the sensor at its edges")
        let farCorner = FocusControls.region(around: FocusPoint(x: 1, y: 0)!, bounds: sensor, minimum: (1, 1))
        #expect(farCorner == (left: 1680, top: 0, width: 240, height: 135))
        let point = FocusControls.region(around: FocusPoint(x: 0.4, y: 0.6)!, bounds: sensor, minimum: (1, 1))
        #expect(point.left + point.width / 2 == 768 && point.top + point.height / 2 == 648, "\(point)")
        // The device's smallest rectangle wins over an eighth, and never more than the sensor.
        let large = FocusControls.region(around: FocusPoint(x: 0.5, y: 0.5)!, bounds: sensor, minimum: (640, 480))
        #expect(large.width == 640 && large.height == 480)
        let tiny = FocusControls.region(around: FocusPoint(x: 0.5, y: 0.5)!, bounds: (8, 8), minimum: (16, 16))
        #expect(tiny == (left: 0, top: 0, width: 8, height: 8))
    }

    @Test func theRegionOfInterestIdsAreTheKernels() {
        // linux/uvcvideo.h: V4L2_CID_USER_UVC_BASE (V4L2_CID_USER_BASE + 0x11e0) + 1 and + 2.
        #expect(cv4l2_cid_roi_rect() == 0x0098_0900 + 0x11e0 + 1)
        #expect(cv4l2_cid_roi_auto() == 0x0098_0900 + 0x11e0 + 2)
        #expect(cv4l2_roi_auto_exposure() == 1 && cv4l2_roi_auto_focus() == 8)
        #expect(cv4l2_ctrl_type_rect() == 0x0107)
        // linux/v4l2-controls.h: the camera class base 0x009a0900.
        #expect(cv4l2_cid_exposure_auto() == 0x009a_0901 && cv4l2_cid_focus_auto() == 0x009a_090c && cv4l2_cid_auto_focus_start() == 0x009a_091c)
    }
}
