import Foundation
import Synchronization
import Testing
import StudioCore
import Encoding
import Output
import TestSupport

/// A recording's second audio track (`StreamDescription.track` 1: a network camera's own sound in its
/// ISO): written as stream 2 beside the program's sound, titled, not the default; announced after the
/// file opened, it finishes that file and the next one has it.
@Suite(.serialized) struct SourceAudioTrackTests {
    /// An AAC stage whose items are the source's own sound (track 1, titled), into `fanOut`.
    /// Set once the stage announced its stream.
    final class Announced: Sendable {
        private let value = Mutex(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }

    static func ownSound(into fanOut: OutputFanOut, announced: Announced? = nil) throws -> AudioEncodingStage {
        AudioEncodingStage(encoder: try AACEncoder(), queueCapacity: 256, events: DiscardingEventSink(), deliver: { item in
            switch item {
            case .format(var description):
                description.track = 1
                description.title = "its own sound"
                fanOut.deliver(.format(description))
                announced?.set()
            case .packet(var packet):
                packet.track = 1
                fanOut.deliver(.packet(packet))
            case .endOfStream: break
            }
        })
    }

    static func audioTracks(_ path: URL) throws -> [String] {
        let probe = try ChildProcess(executable: MediaProbe.ffprobe, arguments: [
            "-v", "error", "-select_streams", "a", "-show_entries", "stream=index,codec_name:stream_tags=title:stream_disposition=default",
            "-of", "csv=p=0", path.path,
        ], outputDirectory: path.deletingLastPathComponent().appendingPathComponent("probe-\(UUID().uuidString.prefix(4))"))
        #expect(probe.wait(timeout: 30) == .exited(0), "\(probe.errorText())")
        return probe.outputText().split(separator: "\n").map(String.init)
    }

    @Test func theSourcesOwnSoundIsASecondTrack() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fanOut = OutputFanOut()
        let feed = try ProgramFeed(fanOut: fanOut)
        let announced = Announced()
        let own = try Self.ownSound(into: fanOut, announced: announced)
        // Announced before the file opens: the first file has it.
        own.submit(SyntheticMedia.audio(firstSample: 0, count: 48_000, frequency: 1000))
        #expect(waitUntil(seconds: 5) { announced.isSet })
        let path = directory.appendingPathComponent("iso.mkv")
        let output = feed.startRecording(path, events: CollectingSink())
        feed.run(seconds: 2)
        own.submit(SyntheticMedia.audio(firstSample: 48_000, count: 48_000, frequency: 1000))
        feed.finish()
        own.finish()
        output.stop(timeoutSeconds: 3)

        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        #expect(try Self.audioTracks(path) == ["1,aac,1", "2,aac,0,its own sound"], "\(files)")
        let probe = try MediaProbe.probe(path)
        #expect(probe.packets.filter { $0.streamIndex == 2 }.count > 30, "the source's own sound is written")
        #expect(probe.packets.filter { $0.streamIndex == 1 }.count > 30, "so is the program's")
        #expect(try MediaProbe.decodeCheck(path).clean)
    }

    /// The source's sound starts after the file opened: that file is finished (one that holds no media yet
    /// is not kept) and the next, `-g1`, has the track.
    @Test func aSoundThatComesLaterGoesInTheNextFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fanOut = OutputFanOut()
        let feed = try ProgramFeed(fanOut: fanOut)
        let path = directory.appendingPathComponent("iso.mkv")
        let output = feed.startRecording(path, events: CollectingSink())
        feed.run(seconds: 1.5)
        let own = try Self.ownSound(into: fanOut)
        own.submit(SyntheticMedia.audio(firstSample: 72_000, count: 96_000, frequency: 1000))
        feed.run(seconds: 2)
        feed.finish()
        own.finish()
        output.stop(timeoutSeconds: 3)

        let first = try Self.audioTracks(path), next = directory.appendingPathComponent("iso-g1.mkv")
        #expect(first == ["1,aac,1"], "the first file has the program's sound only: \(first)")
        #expect(try Self.audioTracks(next) == ["1,aac,1", "2,aac,0,its own sound"])
        #expect(try MediaProbe.decodeCheck(path).clean && MediaProbe.decodeCheck(next).clean)
    }
}
