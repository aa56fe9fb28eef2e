import Foundation
import StudioCore
import Control
import EventStore

// The `result` of each control command, one Codable type per shape. The server encodes them with
// `ControlCoding.encoder`; the CLI decodes them (`studio status` prints a `StatusReply`). Keys are
// declared in each `CodingKeys`; `@Nullable` values are `null` when absent, plain optionals are left out.
// docs/control-protocol.md describes the same shapes. One file per family: CameraReplies, StatusReply,
// HistoryReplies, OutputReplies, AudioReply, PictureReply, ReloadReply, SwitcherReplies; `ping`'s here.

public struct PingReply: Codable, Sendable {
    public var pong = true

    public init(pong: Bool = true) {
        self.pong = pong
    }
}
