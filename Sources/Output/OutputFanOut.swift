import Synchronization
import StudioCore

/// Delivers what the encoders produce to every output. Remembers the latest `.format` per kind, so an
/// output added later gets both descriptions before any packet. `.endOfStream` goes out once every
/// producer (video and audio stage: `expectedEndOfStreams`) has ended.
public final class OutputFanOut: Sendable {
    private struct State {
        var outputs: [MediaOutput] = []
        var video: StreamDescription?
        var audio: StreamDescription?
        /// A recording's second audio track (the source's own sound).
        var sourceAudio: StreamDescription?
        var ended = 0
    }

    public let expectedEndOfStreams: Int
    private let state = Mutex(State())

    public init(expectedEndOfStreams: Int = 2) { self.expectedEndOfStreams = max(1, expectedEndOfStreams) }

    /// Adds an output, first handing it the latest formats (under the same lock as `deliver`, so no
    /// packet can overtake them).
    public func add(_ output: MediaOutput) {
        state.withLock { state in
            // A second audio track first: the output opens its file once it knows the video and the
            // program's sound, and a track announced after that would take the next file.
            if let sourceAudio = state.sourceAudio { output.accept(.format(sourceAudio)) }
            if let video = state.video { output.accept(.format(video)) }
            if let audio = state.audio { output.accept(.format(audio)) }
            if state.ended >= expectedEndOfStreams { output.accept(.endOfStream) }
            state.outputs.append(output)
        }
    }

    /// Removes an output (the caller stops it). Returns whether it was there.
    @discardableResult
    public func remove(_ output: MediaOutput) -> Bool {
        state.withLock { state in
            let before = state.outputs.count
            state.outputs.removeAll { $0 === output }
            return state.outputs.count != before
        }
    }

    public var outputs: [MediaOutput] { state.withLock { $0.outputs } }
    public var latestFormats: (video: StreamDescription?, audio: StreamDescription?) { state.withLock { ($0.video, $0.audio) } }

    /// Hands `item` to every output (non-blocking: each output's queue applies its own policy).
    public func deliver(_ item: MediaItem) {
        state.withLock { state in
            switch item {
            case .format(let description):
                if description.kind == .video {
                    state.video = description
                } else if description.track != 0 {
                    state.sourceAudio = description
                } else {
                    state.audio = description
                }
            case .endOfStream:
                state.ended += 1
                guard state.ended == expectedEndOfStreams else { return }
            case .packet:
                break
            }
            for output in state.outputs { output.accept(item) }
        }
    }
}
