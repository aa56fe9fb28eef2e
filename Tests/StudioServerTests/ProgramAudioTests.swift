import Testing
import Capture
@testable import StudioServer

/// Which camera an audio input belongs to (a webcam's own microphone), from the devices' own names.
@Suite struct ProgramAudioTests {
    static func input(node: String, usb: String? = nil) -> ProgramAudio.Input {
        ProgramAudio.Input(name: "mic1", source: PipeWireMicrophone.label(node), node: node, isMicrophone: true, slot: 1, identity: "pipewire:\(node)", displayName: node,
                           usbDevice: usb, present: true)
    }

    static let cameras = [(name: "cam1", identity: "v4l2:by-id:usb-046d_HD_Pro_Webcam_C920_A1B2C3D4-video-index0"),
                          (name: "cam2", identity: "v4l2:usb-0000:00:14.0-1.4:Integrated Camera"),
                          (name: "cam3", identity: "pattern:bars")]

    @Test func aWebcamsMicrophoneBelongsToItsCamera() {
        // By udev's USB name: ALSA's node and the by-id link name the same device.
        #expect(ProgramAudio.camera(of: Self.input(node: "alsa_input.usb-046d_HD_Pro_Webcam_C920_A1B2C3D4-02.analog-stereo"),
                                    among: Self.cameras) == "cam1")
        // By the USB device key (a V4L2 camera without a by-id link: its bus info).
        #expect(ProgramAudio.camera(of: Self.input(node: "alsa_input.pci-0000_00_1f.3.analog-stereo", usb: "usb-0000:00:14.0-1.4"),
                                    among: Self.cameras) == "cam2")
        // Another webcam's microphone, a desk interface, a virtual microphone: none.
        #expect(ProgramAudio.camera(of: Self.input(node: "alsa_input.usb-046d_HD_Pro_Webcam_C920_FFFF0000-02.analog-stereo"),
                                    among: Self.cameras) == nil)
        #expect(ProgramAudio.camera(of: Self.input(node: "alsa_input.usb-Focusrite_Scarlett_2i2-00.analog-stereo"), among: Self.cameras) == nil)
        #expect(ProgramAudio.camera(of: Self.input(node: "vmicA"), among: Self.cameras) == nil)
    }
}
