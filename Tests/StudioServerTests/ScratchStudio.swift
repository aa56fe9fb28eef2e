import Foundation
import StudioConfig
import StudioServer

/// A scratch directory for one test's server, and that server's options in it: its database and control
/// socket there, one small test-pattern camera, no HTTP API (the network-camera tests' common start).
struct ScratchStudio {
    let directory: URL

    init(_ name: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func options(cameraSize: (width: Int, height: Int) = (320, 180)) -> ServerOptions {
        var options = ServerOptions(configuration: StudioConfiguration(), databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 1
        options.testCameraSize = cameraSize
        options.configuration.http.enabled = false
        return options
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
