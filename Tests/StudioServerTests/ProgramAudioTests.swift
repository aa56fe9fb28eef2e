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

/// A source's own sound (`Camera.audio`) in the program audio: one input named like the source, one
/// block in the set per feed, found, lost and back.
@Suite struct SourceAudioTests {
    @Test func aSourcesFeedIsOneInputFoundLostAndBack() {
        let events = HubEvents()
        let audio = ProgramAudio(source: .silence, events: events, log: ServerLog(), deliver: { _ in })
        defer { audio.stop() }
        func kinds() -> [String] { events.all.filter { $0.details["input"] == "cam2" }.map(\.kind.rawValue) }
        func input() -> ProgramAudio.Input? { audio.inputs.first { $0.name == "cam2" } }

        let feed = TimedAudioInput("solid tone")
        audio.attach(sourceAudio: feed, of: "cam2")
        #expect(kinds() == ["audio_input_found"] && input()?.present == true && input()?.source == "solid tone")
        let slot = input()?.slot
        // The same feed reported again (a camera re-reported while present): nothing new, no second block.
        audio.attach(sourceAudio: feed, of: "cam2")
        #expect(kinds() == ["audio_input_found"] && input()?.slot == slot && audio.inputs.count == 1)

        audio.detach(sourceAudioOf: "cam2")
        #expect(kinds() == ["audio_input_found", "audio_input_lost"] && input()?.present == false)
        // Back with the same feed: its block again, not a new one.
        audio.attach(sourceAudio: feed, of: "cam2")
        #expect(kinds() == ["audio_input_found", "audio_input_lost", "audio_input_back"] && input()?.slot == slot)
        // Back with a new feed (a new stream object): it takes the name's place in a new block.
        audio.detach(sourceAudioOf: "cam2")
        audio.attach(sourceAudio: TimedAudioInput("solid tone 2"), of: "cam2")
        #expect(kinds().suffix(2) == ["audio_input_lost", "audio_input_back"] && input()?.slot != slot && input()?.source == "solid tone 2")
        #expect(audio.inputs.count == 1, "one input for the name: \(audio.inputs.map(\.name))")
        // The old feed's slot is free: the set does not grow as feeds come and go.
        #expect(audio.set.freeSlots == 1 && audio.set.nextSlot == slot)
    }

    /// Removed with its source: the input leaves the list and its slot is free; the name added again is
    /// found afresh, in that slot; many removals leave the set as it was.
    @Test func aRemovedSourcesInputLeavesAndTheSetDoesNotGrow() {
        let events = HubEvents()
        let audio = ProgramAudio(source: .tone, events: events, log: ServerLog(), deliver: { _ in })
        defer { audio.stop() }
        func kinds() -> [String] { events.all.filter { $0.details["input"] == "cam2" }.map(\.kind.rawValue) }

        audio.attach(sourceAudio: TimedAudioInput("solid tone"), of: "cam2")
        let slots = audio.set.count
        let slot = audio.inputs.first { $0.name == "cam2" }?.slot
        #expect(audio.remove(sourceAudioOf: "cam2"))
        #expect(audio.inputs.map(\.name) == ["tone"] && audio.status["cam2"] == nil)
        #expect(!audio.remove(sourceAudioOf: "cam2"), "removed already")
        #expect(audio.set.count == slots && audio.set.freeSlots == 1)
        audio.attach(sourceAudio: TimedAudioInput("solid tone"), of: "cam2")
        #expect(kinds() == ["audio_input_found", "audio_input_found"], "a fresh input after a removal")
        #expect(audio.inputs.first { $0.name == "cam2" }?.slot == slot)
        for _ in 0..<100 {
            #expect(audio.remove(sourceAudioOf: "cam2"))
            audio.attach(sourceAudio: TimedAudioInput("solid tone"), of: "cam2")
        }
        #expect(audio.set.count == slots && audio.set.freeSlots == 0 && audio.inputs.map(\.name) == ["tone", "cam2"])
    }
}
