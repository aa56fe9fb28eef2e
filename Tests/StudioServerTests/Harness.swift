import Foundation
import Testing
import Control
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Runs the real `studio` binary (built next to the test bundle) against a private database and
/// socket in a temporary directory.
final class StudioHarness {
    let directory: URL
    let database: String
    let socket: String
    /// The network namespace `serve` runs the server in (TestSupport's `NetworkNamespaces`), or nil for
    /// this process's own; CLI commands (`run`) run here and reach it by its socket, a file.
    let namespace: NetworkNamespaces.Namespace?
    private(set) var server: ChildProcess?

    static var binary: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("studio").path
    }

    init(namespace: NetworkNamespaces.Namespace? = nil) throws {
        self.namespace = namespace
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-e2e-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        database = directory.appendingPathComponent("studio.db").path
        socket = directory.appendingPathComponent("run/studio.sock").path
        #expect(FileManager.default.isExecutableFile(atPath: Self.binary), "build the studio binary first (swift build)")
    }

    deinit {
        if let server, !server.hasExited { _ = server.stop(grace: 5) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts `studio serve` with the harness's database and socket, and waits until it answers. The
    /// HTTP API is off (tests run side by side; the default port is one) unless `arguments` ask for it
    /// with `--http ADDR:PORT`.
    @discardableResult
    func serve(_ arguments: [String], waitUntilReady: Bool = true, environment: [String: String]? = nil) throws -> ChildProcess {
        let http = arguments.contains("--http") ? [] : ["--no-http"]
        let serve = ["serve", "--db", database, "--socket", socket] + http + arguments
        let (executable, launched) = namespace?.command(Self.binary, serve) ?? (Self.binary, serve)
        let child = try ChildProcess(executable: executable, arguments: launched,
                                     environment: environment,
                                     outputDirectory: directory.appendingPathComponent("serve-\(UUID().uuidString.prefix(4))"))
        server = child
        if waitUntilReady {
            let ready = waitUntil(seconds: 15, every: 0.1) { (try? self.status()) != nil || child.hasExited }
            try #require(ready && !child.hasExited, "server did not come up: \(child.errorText())")
        }
        return child
    }

    /// Runs a CLI command to completion.
    func run(_ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, output: String, error: String) {
        let child = try ChildProcess(executable: Self.binary, arguments: arguments, environment: environment,
                                     outputDirectory: directory.appendingPathComponent("cli-\(UUID().uuidString.prefix(6))"))
        guard let exit = child.wait(timeout: 30) else {
            _ = child.stop()
            throw HarnessError("studio \(arguments.joined(separator: " ")) did not finish")
        }
        let status: Int32 = switch exit { case .exited(let code): code; case .signalled(let signal): 128 + signal }
        return (status, child.outputText(), child.errorText())
    }

    /// Runs a client command against this harness's server and parses its `--json` output.
    func json(_ arguments: [String]) throws -> JSONValue {
        let result = try run(arguments + ["--json", "--socket", socket])
        guard result.status == 0 else { throw HarnessError("studio \(arguments.joined(separator: " ")): \(result.error)") }
        return try JSONValue(parsing: result.output)
    }

    func status() throws -> JSONValue {
        let client = try ControlClient(socketPath: socket)
        return try client.request("status", arguments: [:], timeoutSeconds: 5)
    }

    /// Stops the server with SIGINT and waits for a clean exit.
    func stopServer(signal: Int32 = SIGINT, timeout: Double = 20) -> ChildProcess.Exit? {
        guard let server else { return nil }
        server.terminate(signal: signal)
        return server.wait(timeout: timeout)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}


extension StudioHarness {
    /// Waits until the program has delivered `count` more frames: program time passing rather than wall
    /// time (a loaded machine gets there later), with a generous deadline.
    func waitForProgramFrames(_ count: Int, seconds: Double = 30) -> Bool {
        func encoded() -> Int? { (try? status())?["program"]?["frames"]?.intValue }
        guard let start = encoded() else { return false }
        return waitUntil(seconds: seconds, every: 0.1) { (encoded() ?? 0) >= start + count }
    }
}
