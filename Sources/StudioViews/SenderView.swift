/// A capture node's sender as `status` gives it (`senders`): one camera's feed, encoded on its own
/// (what `iso` says of a feed: encoder, size, frames, its URL masked as `path`) and its connection to
/// the switcher (what `outputs` says of an output, named `send-CAM`: state, bytes, reconnects, last
/// error). The two views are the ISO feed's and the output's, not written again.
public struct SenderView: Codable, Sendable {
    public var camera: String
    /// The camera's name on the switcher (`pc2/cam1`): its SRT stream id.
    public var streamID: String
    public var feed: StatusReply.IsoView
    public var output: OutputView

    enum CodingKeys: String, CodingKey {
        case camera, feed, output
        case streamID = "stream_id"
    }

    public init(camera: String, streamID: String, feed: StatusReply.IsoView, output: OutputView) {
        self.camera = camera
        self.streamID = streamID
        self.feed = feed
        self.output = output
    }
}
