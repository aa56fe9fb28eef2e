import Foundation
import StudioCore
import Control

/// What a reload did: the file and the keys it changed (empty: the file says what the server does), and
/// what in it will show the slate (a scene showing a camera that is not connected), said as sentences.
public struct ReloadReply: Codable, Sendable {
    public var file: String
    public var changed: [String]
    public var warnings: [String]

    public init(file: String, changed: [String], warnings: [String] = []) {
        self.file = file
        self.changed = changed
        self.warnings = warnings
    }
}
