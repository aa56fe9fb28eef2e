import Testing
import StudioCore
@testable import Capture
import Mixer
@testable import StudioServer

/// The stingers' input in the program audio: there while a loaded stinger has sound, none otherwise;
/// its latency compensated from its first span.
@Suite struct StingerSoundWiringTests {
    static func clip(_ path: String, sound: [Float]?) -> StingerClip {
        StingerClip(path: path, pictures: [.init(frame: VideoFrame.allocate(format: .i420, width: 16, height: 16), alpha: nil)],
                    timing: StingerTiming(times: [0], length: 33_333_333), sound: sound)
    }

    @Test func theInputIsThereWhileALoadedStingerHasSound() {
        let events = HubEvents()
        let audio = ProgramAudio(source: .silence, events: events, log: ServerLog(), deliver: { _ in })
        defer { audio.stop() }
        func names() -> [String] { audio.inputs.map(\.name) }
        audio.update(stingers: [Self.clip("a.mov", sound: nil)])
        #expect(names().isEmpty)
        audio.update(stingers: [Self.clip("a.mov", sound: nil), Self.clip("b.mov", sound: [0, 0])])
        #expect(names() == ["stinger"])
        // Reloaded with the same: still one input.
        audio.update(stingers: [Self.clip("b.mov", sound: [0, 0])])
        #expect(names() == ["stinger"] && audio.set.count == 2)
        audio.update(stingers: [])
        #expect(names().isEmpty)
        // A source named `stinger` with its own sound keeps its input; the stingers' is not added.
        let feed = TimedAudioInput("solid tone")
        audio.attach(sourceAudio: feed, of: "stinger")
        audio.update(stingers: [Self.clip("b.mov", sound: [0, 0])])
        #expect(audio.inputs.map(\.source) == ["solid tone"])
    }

    /// An input that joins has its latency (its status' `bufferDelay`) compensated from its first span,
    /// not a measure (100 ms) later: a sting right after a reload is in its place.
    @Test func aJoiningInputsLatencyIsCompensatedFromItsFirstSpan() {
        let mixer = AudioMixer(format: .program, readAhead: 4_800)
        let stage = MixerStage(mixer: mixer, lagFrames: 4_800, deliver: { _ in })
        let sound = StingerSound(latency: 4_800)
        stage.captureStatus = { [AudioInputStatus(state: "playing"), sound.status] }
        func take(_ first: Int64, names: [(slot: Int, name: String)]) {
            let chunk = AudioChunk(format: .program, samples: [Float](repeating: 0, count: 480 * 2), pts: .zero, firstSample: first)
            stage.take(AudioInputBlocks(firstSample: first, pts: .zero, blocks: [chunk, chunk]), names: names)
        }
        take(0, names: [(0, "silence")])
        #expect(mixer.compensation(of: "stinger") == 0)
        take(480, names: [(0, "silence"), (1, "stinger")])
        #expect(mixer.compensation(of: "stinger") == 4_800)
    }
}
