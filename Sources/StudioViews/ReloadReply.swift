import Foundation
import StudioCore
import Control

/// What a reload did: the file and the keys it changed (empty: the file says what the server does).
public struct ReloadReply: Codable, Sendable {
    public var file: String
    public var changed: [String]

    public init(file: String, changed: [String]) {
        self.file = file
        self.changed = changed
    }
}
