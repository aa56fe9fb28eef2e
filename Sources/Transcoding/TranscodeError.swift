/// Why a file was not transcoded, in the operator's words. Nothing is left behind by any of them: the
/// output is written to a temporary file beside it and renamed only when complete.
public enum TranscodeError: Error, CustomStringConvertible, Equatable, Sendable {
    case missing(String)
    /// libavformat cannot read it as media (the reason from libavformat).
    case unreadable(String, reason: String)
    case noVideo(String)
    /// An H.264 ISO (or an H.264 camera's passthrough): editors take it as it is.
    case alreadyH264(String)
    /// Video in another codec than MJPEG (its name).
    case notMJPEG(String, codec: String)
    case outputExists(String)
    /// The output's directory cannot be written (why).
    case outputNotWritable(String, reason: String)
    case diskFull(String)
    /// Writing the output failed for another reason.
    case writeFailed(String, reason: String)
    /// Decoding or encoding failed (what libavcodec said).
    case encodeFailed(String, reason: String)
    /// Interrupted (Ctrl-C): the partial output was removed.
    case cancelled(String)

    public var description: String {
        switch self {
        case .missing(let path): "\(path): no such file"
        case .unreadable(let path, let reason): "\(path) is not a media file libavformat can read (\(reason))"
        case .noVideo(let path): "\(path) has no video stream: not a studio ISO file"
        case .alreadyH264(let path):
            "\(path) is already H.264: it needs no transcode (every editor that takes MP4 or MOV takes its video; to change only the container: ffmpeg -i FILE -c copy FILE.mov)"
        case .notMJPEG(let path, let codec):
            "\(path) holds \(codec) video, not MJPEG: studio transcode converts passthrough ISO files (a camera's own JPEG frames)"
        case .outputExists(let path): "\(path) already exists: remove it or choose another --output directory"
        case .outputNotWritable(let directory, let reason): "cannot write in \(directory): \(reason)"
        case .diskFull(let path): "the disk is full: \(path) was not written (the partial file was removed)"
        case .writeFailed(let path, let reason): "writing \(path) failed: \(reason) (the partial file was removed)"
        case .encodeFailed(let path, let reason): "transcoding \(path) failed: \(reason)"
        case .cancelled(let path): "interrupted: \(path) was not written (the partial file was removed)"
        }
    }
}
