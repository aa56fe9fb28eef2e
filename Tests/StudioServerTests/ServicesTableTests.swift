import Foundation
import Testing
import StudioConfig
import StudioCore
@testable import StudioServer

/// docs/architecture.md's table "Services: started in order, stopped in reverse" is the list a running
/// server builds: the same services, in the same order (the stop order is that list reversed).
@Suite struct ServicesTableTests {
    @Test func theDocumentedServicesAreTheOnesAServerStartsInThatOrder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-services-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = StudioConfiguration()
        configuration.http.listen = ListenAddress(host: "127.0.0.1", port: 0)
        var options = ServerOptions(configuration: configuration, databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 1
        options.testCameraSize = (320, 180)
        let server = try StudioServer(options: options)
        let started = server.services.names
        server.shutdown()

        let documented = try DocumentTables.cells(of: "docs/architecture.md", section: "Services: started in order, stopped in reverse", column: 1)
        #expect(documented == started, "the table lists \(documented); a server starts \(started)")
        let numbers = try DocumentTables.cells(of: "docs/architecture.md", section: "Services: started in order, stopped in reverse", column: 0)
        #expect(numbers == (1...documented.count).map(String.init), "the order column counts 1, 2, 3...: \(numbers)")
        #expect(server.services.names.isEmpty, "after shutdown every service stopped: \(server.services.names)")
    }
}
