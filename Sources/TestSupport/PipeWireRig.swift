import Foundation
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// A private headless PipeWire daemon for tests and the benchmark: `pipewire -c deploy/pipewire-test.conf`
/// with its own XDG_RUNTIME_DIR (a fresh temp dir), no systemd, no D-Bus, no session manager unless
/// `startSessionManager()` is called. Clients reach it through `remote` (an absolute PIPEWIRE_REMOTE).
/// Virtual cameras are `pw-virtual-camera` processes (built next to the test binary). Every process
/// is a `ChildProcess` this rig started and ends by its PID.
///
/// `@unchecked Sendable`: mutable state (`daemon`, `cameras`, `sessionManager`) is guarded by `lock`.
public final class PipeWireRig: @unchecked Sendable {
    public enum Failure: Error, CustomStringConvertible {
        case notInstalled(String)
        case didNotStart(String)
        public var description: String {
            switch self {
            case .notInstalled(let what): "PipeWire rig: \(what) is not installed or built"
            case .didNotStart(let what): "PipeWire rig: \(what)"
            }
        }
    }

    public static let daemonExecutable = "/usr/bin/pipewire"
    public let runtimeDirectory: URL
    public let configuration: URL
    /// The daemon's socket: what PIPEWIRE_REMOTE must say.
    public var remote: String { runtimeDirectory.appendingPathComponent("pipewire-0").path }
    /// Environment for a client process of this daemon (and nothing else of the test's).
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = runtimeDirectory.path
        env["PIPEWIRE_REMOTE"] = remote
        env.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        return env
    }

    private let lock = ConditionLock()
    private var daemon: ChildProcess?
    private var cameras: [String: ChildProcess] = [:]
    private var helpers: [ChildProcess] = []

    /// - Parameter configuration: the daemon's config (default: `deploy/pipewire-test.conf` of this repository).
    public init(configuration: URL? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.daemonExecutable) else { throw Failure.notInstalled(Self.daemonExecutable) }
        self.configuration = configuration ?? Self.repositoryRoot.appendingPathComponent("deploy/pipewire-test.conf")
        guard FileManager.default.fileExists(atPath: self.configuration.path) else { throw Failure.notInstalled(self.configuration.path) }
        runtimeDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("pw-rig-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: runtimeDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: runtimeDirectory)
    }

    /// This repository's root (found from this source file's path at build time).
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The directory the test binary (and so `pw-virtual-camera` and `studio`) was built into.
    public static var productsDirectory: URL {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent()
    }

    public static var cameraExecutable: String { productsDirectory.appendingPathComponent("pw-virtual-camera").path }

    public var isRunning: Bool { lock.withLock { daemon.map { !$0.hasExited } ?? false } }
    public var daemonPID: pid_t? { lock.withLock { daemon?.pid } }

    /// Starts the daemon and waits (up to 5 s) until its socket accepts connections.
    public func start() throws {
        let child = try lock.withLock { () throws -> ChildProcess in
            if let daemon, !daemon.hasExited { return daemon }
            let child = try ChildProcess(executable: Self.daemonExecutable, arguments: ["-c", configuration.path],
                                         environment: environment, outputDirectory: runtimeDirectory.appendingPathComponent("logs"))
            daemon = child
            return child
        }
        let deadline = MonotonicClock.now() + 5_000_000_000
        while MonotonicClock.now() < deadline {
            if child.hasExited { throw Failure.didNotStart("pipewire exited: \(child.errorText())") }
            if Self.accepts(socket: remote) { return }
            MonotonicClock.sleep(seconds: 0.01)
        }
        child.stop()
        throw Failure.didNotStart("pipewire's socket \(remote) never accepted a connection: \(child.errorText())")
    }

    /// Stops every camera, helper and the daemon.
    public func stop() {
        let (all, daemonProcess) = lock.withLock { () -> ([ChildProcess], ChildProcess?) in
            defer {
                cameras = [:]
                helpers = []
                daemon = nil
            }
            return (Array(cameras.values) + helpers, daemon)
        }
        for child in all { child.stop(grace: 2) }
        daemonProcess?.stop(grace: 3)
        try? FileManager.default.removeItem(at: runtimeDirectory.appendingPathComponent("pipewire-0"))
        try? FileManager.default.removeItem(at: runtimeDirectory.appendingPathComponent("pipewire-0.lock"))
    }

    /// Kills the daemon outright (SIGKILL), as a crash would.
    public func killDaemon() {
        let child = lock.withLock { daemon }
        child?.terminate(signal: SIGKILL)
        child?.wait(timeout: 5)
    }

    /// Starts a virtual camera publishing node `node` with `camera`'s test pattern, and waits until it says
    /// it is ready (its node exists). Replaces (ends) an earlier producer of the same node name.
    @discardableResult
    public func startCamera(node: String, camera: String, size: String = "640x480", rate: Int = 30, format: String = "i420",
                            extraArguments: [String] = []) throws -> ChildProcess {
        try startProducer(node: node, arguments: ["--node", node, "--camera", camera, "--size", size, "--rate", String(rate), "--format", format]
                          + extraArguments)
    }

    /// Starts a virtual microphone (`pw-virtual-camera --beep`): an Audio/Source named `node`, silent but
    /// for a 1 kHz beep in the first 100 ms of every whole second of CLOCK_MONOTONIC, moved by
    /// `offsetMilliseconds` (negative: early).
    @discardableResult
    public func startBeeper(node: String, offsetMilliseconds: Int = 0) throws -> ChildProcess {
        try startProducer(node: node, arguments: ["--node", node, "--beep", "1", "--beep-offset-ms", String(offsetMilliseconds)])
    }

    /// Starts a virtual microphone (`pw-virtual-camera --mic`): an Audio/Source named `node` playing a
    /// sine at `tone` Hz, its own driver with a clock `ppm` fast (positive) or slow against CLOCK_MONOTONIC;
    /// with `plainStream`, published instead as a plain `pw_stream` output (`--mic-stream`: no port
    /// configuration, not a driver), the way virtual microphones and filter chains publish theirs.
    @discardableResult
    public func startMicrophone(node: String, tone: Int = 440, ppm: Int = 0, plainStream: Bool = false) throws -> ChildProcess {
        try startProducer(node: node, arguments: [plainStream ? "--mic-stream" : "--mic", node, "--tone", String(tone), "--ppm", String(ppm)])
    }

    private func startProducer(node: String, arguments: [String]) throws -> ChildProcess {
        guard FileManager.default.isExecutableFile(atPath: Self.cameraExecutable) else { throw Failure.notInstalled(Self.cameraExecutable) }
        stopCamera(node: node)
        let child = try ChildProcess(executable: Self.cameraExecutable,
                                     arguments: arguments,
                                     environment: environment,
                                     outputDirectory: runtimeDirectory.appendingPathComponent("logs/\(node)-\(UUID().uuidString.prefix(4))"))
        lock.withLock { cameras[node] = child }
        let deadline = MonotonicClock.now() + 5_000_000_000
        while MonotonicClock.now() < deadline {
            if child.outputText().contains("ready") {
                // The node is created right after; give the daemon a moment to register it.
                MonotonicClock.sleep(seconds: 0.1)
                return child
            }
            if child.hasExited { throw Failure.didNotStart("pw-virtual-camera \(node) exited: \(child.errorText())") }
            MonotonicClock.sleep(seconds: 0.01)
        }
        child.stop()
        throw Failure.didNotStart("pw-virtual-camera \(node) never became ready: \(child.errorText())")
    }

    /// Kills the producer (camera or beeper) of `node` (SIGKILL by default: a camera unplugged) and waits until it is gone.
    public func stopCamera(node: String, signal: Int32 = SIGKILL) {
        guard let child = lock.withLock({ cameras.removeValue(forKey: node) }) else { return }
        child.terminate(signal: signal)
        child.wait(timeout: 5)
    }

    /// Sets (or with nil deletes) property `key` of subject 0 in the daemon's "default" metadata with
    /// `pw-metadata`, as a session manager does (`default.audio.source` = `{ "name": "<node>" }`).
    public func setDefaultMetadata(_ key: String, to value: String?) throws {
        let tool = "/usr/bin/pw-metadata"
        guard FileManager.default.isExecutableFile(atPath: tool) else { throw Failure.notInstalled(tool) }
        let arguments = value.map { ["-r", remote, "0", key, $0, "Spa:String:JSON"] } ?? ["-r", remote, "-d", "0", key]
        let child = try ChildProcess(executable: tool, arguments: arguments, environment: environment)
        defer { try? FileManager.default.removeItem(at: child.standardOutput.deletingLastPathComponent()) }
        guard child.wait(timeout: 5) == .exited(0) else {
            child.stop()
            throw Failure.didNotStart("pw-metadata \(arguments.joined(separator: " ")): \(child.errorText())")
        }
    }

    /// Starts a session manager beside the daemon: a private D-Bus session bus (`dbus-daemon`, which
    /// WirePlumber needs) and `wireplumber`, and waits (up to 5 s) until WirePlumber is a client of the
    /// daemon. Both end with the rig.
    public func startSessionManager() throws {
        for tool in ["/usr/bin/dbus-daemon", "/usr/bin/wireplumber", "/usr/bin/pw-cli"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw Failure.notInstalled(tool)
        }
        let bus = runtimeDirectory.appendingPathComponent("bus").path
        try startHelper(executable: "/usr/bin/dbus-daemon", arguments: ["--session", "--address=unix:path=\(bus)", "--nofork", "--nopidfile"])
        let deadline = MonotonicClock.now() + 5_000_000_000
        while !FileManager.default.fileExists(atPath: bus), MonotonicClock.now() < deadline { MonotonicClock.sleep(seconds: 0.01) }
        let wireplumber = try startHelper(executable: "/usr/bin/wireplumber", extraEnvironment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(bus)"])
        while MonotonicClock.now() < deadline {
            if wireplumber.hasExited { throw Failure.didNotStart("wireplumber exited: \(wireplumber.errorText())") }
            let probe = try ChildProcess(executable: "/usr/bin/pw-cli", arguments: ["ls", "Client"], environment: environment,
                                         outputDirectory: runtimeDirectory.appendingPathComponent("logs/pw-cli"))
            probe.wait(timeout: 5)
            if probe.outputText().contains("\"WirePlumber\"") { return }
            MonotonicClock.sleep(seconds: 0.05)
        }
        throw Failure.didNotStart("wireplumber never became a client of the daemon: \(wireplumber.errorText())")
    }

    /// Runs another client of this daemon (for example `wireplumber`), ended with the rig.
    @discardableResult
    public func startHelper(executable: String, arguments: [String] = [], extraEnvironment: [String: String] = [:]) throws -> ChildProcess {
        let child = try ChildProcess(executable: executable, arguments: arguments, environment: environment.merging(extraEnvironment) { $1 },
                                     outputDirectory: runtimeDirectory.appendingPathComponent("logs/\((executable as NSString).lastPathComponent)-\(UUID().uuidString.prefix(4))"))
        lock.withLock { helpers.append(child) }
        return child
    }

    /// True when a Unix stream socket at `path` accepts a connection.
    static func accepts(socket path: String) -> Bool {
        guard let fd = try? syscall("socket", { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0) }) else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                try? syscall("connect") { connect(fd, pointer, length) }
            }
        }
        return result != nil
    }
}
