import StudioCore
import StudioSystem

/// Wraps a real encoder and makes it fail or crawl on purpose: after `failAfterFrames` successful frames
/// every `encode` throws; with `secondsPerFrame`, every `encode` takes at least that long (an encoder too
/// slow for its format). For testing (and rehearsing) the stage's fallback and overload paths without
/// broken or slow hardware.
public final class FaultInjectingEncoder: VideoEncoder {
    public struct InjectedFault: Error, CustomStringConvertible {
        public let frame: Int
        public var description: String { "injected encoder fault at frame \(frame)" }
    }

    public let wrapped: VideoEncoder
    public let failAfterFrames: Int
    public let secondsPerFrame: Double
    public private(set) var framesEncoded = 0

    public init(wrapping encoder: VideoEncoder, failAfterFrames: Int = .max, secondsPerFrame: Double = 0) {
        wrapped = encoder
        self.failAfterFrames = failAfterFrames
        self.secondsPerFrame = max(0, secondsPerFrame)
    }

    public var name: String { wrapped.name }
    public var settings: VideoEncoderSettings { wrapped.settings }
    public var streamDescription: StreamDescription { wrapped.streamDescription }

    public func encode(_ frame: VideoFrame, pts: MediaTime, forceKeyframe: Bool) throws -> [EncodedPacket] {
        guard framesEncoded < failAfterFrames else { throw InjectedFault(frame: framesEncoded) }
        let started = MonotonicClock.now()
        framesEncoded += 1
        let packets = try wrapped.encode(frame, pts: pts, forceKeyframe: forceKeyframe)
        if secondsPerFrame > 0 { MonotonicClock.sleep(until: started + UInt64(secondsPerFrame * 1e9)) }
        return packets
    }

    public func flush() throws -> [EncodedPacket] { try wrapped.flush() }
}
