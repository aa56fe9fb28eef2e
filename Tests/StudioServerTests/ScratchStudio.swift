import Foundation
import StudioConfig
import StudioCore
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

    /// `options()` with the HTTP API on a free loopback port (`server.http?.port` says which), asking
    /// for `token` when one is given.
    func options(httpToken token: String?, cameras: Int) -> ServerOptions {
        var options = options()
        options.testCameraCount = cameras
        options.configuration.http.enabled = true
        options.configuration.http.listen = ListenAddress(host: "127.0.0.1", port: 0)
        options.configuration.http.token = token
        return options
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
