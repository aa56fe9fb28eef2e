import Foundation
import StudioCore
import Control

/// `picture`'s reply: a camera's picture settings in force, and when (for a change) they took effect.
public struct PictureReply: Codable, Sendable {
    public var camera: String
    /// Every setting (`PictureSettings.Key`'s names).
    public var picture: PictureSettings
    /// What the change changed: `{"mirror": "false -> true"}` (empty when showing).
    public var changed: [String: String]
    /// The pts of the first program frame with these settings (null when only showing them).
    @Nullable public var programMilliseconds: Int64?
    @Nullable public var frame: Int?

    enum CodingKeys: String, CodingKey {
        case camera, picture, changed, frame
        case programMilliseconds = "program_ms"
    }

    public init(camera: String, picture: PictureSettings, changed: [String: String], programMilliseconds: Int64? = nil, frame: Int? = nil) {
        self.camera = camera
        self.picture = picture
        self.changed = changed
        self.programMilliseconds = programMilliseconds
        self.frame = frame
    }
}
