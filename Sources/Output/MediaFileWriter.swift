import MediaSupport
import StudioCore

/// A media file written packet by packet on the caller's own thread: no queue, no reconnect, no
/// dropping; every write waits for the disk. For work after the show (`studio transcode`), never for
/// the live path, which goes through `MediaOutput`. The same `Muxer` as the recordings: packets keep
/// their program timestamps (never shifted to start at zero), streams are video then audio (optional).
/// Not thread-safe: one thread owns it.
public final class MediaFileWriter {
    /// libavformat's short names of the containers it writes (`mov`, `mp4`, `matroska`).
    public let format: String
    private let muxer: Muxer

    /// Opens `path` (created or truncated) and writes the header.
    public init(path: String, format: String, video: StreamDescription, audio: StreamDescription?) throws(FFmpegError) {
        self.format = format
        muxer = try Muxer(format: format, url: path, isNetwork: false, video: video, audio: audio,
                          interrupt: InterruptState(), connectTimeout: nil, ioTimeout: nil)
    }

    /// Writes one packet (interleaved by time with the other stream). Throws on a write error and for a
    /// packet whose dts does not follow its stream's previous one (it would corrupt the file).
    public func write(_ packet: EncodedPacket) throws(FFmpegError) {
        guard try muxer.write(packet) else {
            throw FFmpegError(call: "MediaFileWriter.write",
                              message: "\(packet.kind.rawValue) packet at \(packet.dts) does not follow the previous one")
        }
    }

    /// Bytes handed to the file so far.
    public var bytesWritten: Int64 { muxer.bytesWritten }

    /// Writes the trailer and closes the file; throws when it did not all reach the disk.
    public func finish() throws(FFmpegError) { try muxer.finish() }

    /// Closes the file without its trailer (the caller deletes it).
    public func abandon() { muxer.close(writeTrailer: false) }
}
