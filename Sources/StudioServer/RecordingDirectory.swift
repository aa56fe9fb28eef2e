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

    /// A camera's ISO recording: `session-ID-camN.mkv`; a camera added again after it was removed
    /// (`CameraHub.remove`) records its next take, `session-ID-camN-take2.mkv`, never over a file there.
    /// A capture node's camera (`pc2/cam1`) is `session-ID-pc2.cam1.mkv`: a `.` no plain name holds,
    /// where the name's `/` would make a directory.
    static func isoPath(in directory: String, session: Int64, camera: CameraID,
                        exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> String {
        let stem = camera.name.replacingOccurrences(of: String(SRTListenerSpec.nodeSeparator), with: ".")
        let first = (directory as NSString).appendingPathComponent("session-\(session)-\(stem).mkv")
        var path = first, number = 1
        while exists(path) {
            number += 1
            path = take(number, of: first)
        }
        return path
    }

    /// A recording's take `take` (a recording started again): `/r/session-3-program.mkv` as take 2 is
    /// `/r/session-3-program-take2.mkv`.
    static func take(_ take: Int, of path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension
        let stem = url.deletingPathExtension().lastPathComponent + "-take\(take)"
        return url.deletingLastPathComponent().appendingPathComponent(ext.isEmpty ? stem : "\(stem).\(ext)").path
    }
}
