import Foundation
import StudioCore

/// Recording files: one directory, one file per session and source.
enum RecordingDirectory {
    /// Creates `directory` (and missing parents) with `mode` when it does not exist, and checks that
    /// it can be written.
    static func prepare(_ directory: String, mode: mode_t) throws {
        do { try FileModes.makeDirectory(directory, mode: mode) } catch {
            throw ServerError("cannot create the recording directory \(directory): \(error)")
        }
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw ServerError("the recording directory \(directory) is not writable by this user")
        }
    }

    static func programPath(in directory: String, session: Int64) -> String {
        (directory as NSString).appendingPathComponent("session-\(session)-program.mkv")
    }

    /// A recording the operator added mid-show as NAME (`studio output add NAME --record`):
    /// `session-ID-output-NAME.mkv`, apart from the cameras' ISO files and the program's.
    static func outputPath(in directory: String, session: Int64, output: String) -> String {
        (directory as NSString).appendingPathComponent("session-\(session)-output-\(output).mkv")
    }

    /// A camera's ISO recording: `session-ID-camN.mkv`.
    static func isoPath(in directory: String, session: Int64, camera: CameraID) -> String {
        (directory as NSString).appendingPathComponent("session-\(session)-\(camera.name).mkv")
    }
}
