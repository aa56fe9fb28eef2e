import StudioCore

/// Wraps a real encoder and makes it fail on purpose: after `failAfterFrames` successful frames every
/// `encode` throws. For testing (and rehearsing) the stage's fallback path without broken hardware.
public final class FaultInjectingEncoder: VideoEncoder {
    public struct InjectedFault: Error, CustomStringConvertible {
        public let frame: Int
        public var description: String { "injected encoder fault at frame \(frame)" }
    }

    public let wrapped: VideoEncoder
    public let failAfterFrames: Int
    public private(set) var framesEncoded = 0

    public init(wrapping encoder: VideoEncoder, failAfterFrames: Int) {
        wrapped = encoder
        self.failAfterFrames = failAfterFrames
    }

    public var name: String { wrapped.name }
    public var settings: VideoEncoderSettings { wrapped.settings }
    public var streamDescription: StreamDescription { wrapped.streamDescription }

    public func encode(_ frame: VideoFrame, pts: MediaTime, forceKeyframe: Bool) throws -> [EncodedPacket] {
        guard framesEncoded < failAfterFrames else { throw InjectedFault(frame: framesEncoded) }
        framesEncoded += 1
        return try wrapped.encode(frame, pts: pts, forceKeyframe: forceKeyframe)
    }

    public func flush() throws -> [EncodedPacket] { try wrapped.flush() }
}
