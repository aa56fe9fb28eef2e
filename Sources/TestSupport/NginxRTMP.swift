import Foundation
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// A private nginx with the RTMP module, run as a child process of the test (`daemon off;
/// master_process off;`, so it stays one process owned by whoever started it) on 127.0.0.1 and a free
/// port. Application `live` records every published stream as FLV into `recordDirectory`
/// (`record_unique on`: one file per publish, `STREAM-UNIXTIME.flv`).
///
/// `@unchecked Sendable`: mutable state (`process`, `directives`) is guarded by `lock`.
public final class NginxRTMP: @unchecked Sendable {
    public enum Failure: Error, CustomStringConvertible {
        case notInstalled(String)
        case didNotStart(String)
        public var description: String {
            switch self {
            case .notInstalled(let what): "nginx-rtmp is not installed: \(what)"
            case .didNotStart(let log): "nginx did not start: \(log)"
            }
        }
    }

    public static let modulePath = "/usr/lib/nginx/modules/ngx_rtmp_module.so"
    public static let executable = "/usr/sbin/nginx"

    public let prefix: URL
    public let recordDirectory: URL
    public let port: Int
    public var configurationFile: URL { prefix.appendingPathComponent("nginx.conf") }
    public var errorLog: URL { prefix.appendingPathComponent("logs/error.log") }

    private let lock = ConditionLock()
    private var process: ChildProcess?

    /// Prepares a prefix directory (a fresh temp dir unless given) and picks a free port.
    public init(prefix: URL? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else { throw Failure.notInstalled(Self.executable) }
        guard FileManager.default.fileExists(atPath: Self.modulePath) else { throw Failure.notInstalled(Self.modulePath) }
        self.prefix = prefix ?? FileManager.default.temporaryDirectory.appendingPathComponent("nginx-rtmp-\(UUID().uuidString.prefix(8))")
        recordDirectory = self.prefix.appendingPathComponent("recordings")
        for directory in ["logs", "recordings", "temp"] {
            try FileManager.default.createDirectory(at: self.prefix.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        port = try Self.freePort()
        try configuration().write(to: configurationFile, atomically: true, encoding: .utf8)
    }

    deinit { stop() }

    /// The RTMP URL to publish `stream` to (`rtmp://127.0.0.1:PORT/live/STREAM`).
    public func url(stream: String) -> String { "rtmp://127.0.0.1:\(port)/live/\(stream)" }

    public var isRunning: Bool { lock.withLock { process.map { !$0.hasExited } ?? false } }
    public var pid: pid_t? { lock.withLock { process?.pid } }

    /// Lines added to the `live` application (an `on_publish` callback, say), written at the next `start`.
    public var applicationDirectives: String {
        get { lock.withLock { directives } }
        set { lock.withLock { directives = newValue } }
    }
    private var directives = ""

    /// Starts nginx and waits until the port accepts connections (up to 10 s).
    public func start() throws {
        let child = try lock.withLock { () throws -> ChildProcess in
            if let process, !process.hasExited { return process }
            try configuration().write(to: configurationFile, atomically: true, encoding: .utf8)
            let child = try ChildProcess(executable: Self.executable,
                                         arguments: ["-p", prefix.path + "/", "-c", configurationFile.path,
                                                     "-e", errorLog.path],
                                         outputDirectory: prefix.appendingPathComponent("logs"))
            process = child
            return child
        }
        let deadline = MonotonicClock.now() + 10_000_000_000
        while MonotonicClock.now() < deadline {
            if child.hasExited { throw Failure.didNotStart(log()) }
            if Self.accepts(port: port) { return }
            MonotonicClock.sleep(seconds: 0.02)
        }
        child.stop()
        throw Failure.didNotStart("port \(port) never accepted connections. \(log())")
    }

    /// SIGTERM (nginx closes its recordings and exits), SIGKILL if it does not exit within 5 s.
    public func stop() {
        let child = lock.withLock { () -> ChildProcess? in
            defer { process = nil }
            return process
        }
        child?.stop(grace: 5)
    }

    /// Stops and starts again on the same port (a publisher reconnecting finds it at the same URL).
    public func restart() throws {
        stop()
        try start()
    }

    /// Recorded FLV files, oldest first (by modification time, then name).
    public func recordings() -> [URL] {
        let keys: [URLResourceKey] = [.contentModificationDateKey]
        let files = (try? FileManager.default.contentsOfDirectory(at: recordDirectory, includingPropertiesForKeys: keys)) ?? []
        return files.filter { $0.pathExtension == "flv" }.sorted { a, b in
            let da = (try? a.resourceValues(forKeys: Set(keys)).contentModificationDate) ?? .distantPast
            let db = (try? b.resourceValues(forKeys: Set(keys)).contentModificationDate) ?? .distantPast
            return da == db ? a.lastPathComponent < b.lastPathComponent : da < db
        }
    }

    /// nginx's error log and stderr, for failure messages.
    public func log() -> String {
        let error = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOf: prefix.appendingPathComponent("logs/nginx.stderr"), encoding: .utf8)) ?? ""
        return String((error + stderr).suffix(4000))
    }

    private func configuration() -> String {
        let p = prefix.path
        return """
        load_module \(Self.modulePath);
        daemon off;
        master_process off;
        worker_processes 1;
        pid \(p)/logs/nginx.pid;
        error_log \(p)/logs/error.log info;
        events { worker_connections 64; }
        rtmp {
            access_log \(p)/logs/rtmp_access.log;
            server {
                listen 127.0.0.1:\(port);
                chunk_size 4096;
                application live {
                    live on;
                    record all;
                    record_path \(recordDirectory.path);
                    record_unique on;
                    \(directives)
                }
            }
        }

        """
    }

    /// Binds port 0 on 127.0.0.1 and reports the port the kernel chose.
    public static func freePort() throws -> Int {
        let fd = try syscall("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
        defer { close(fd) }
        var address = loopbackAddress(port: 0)
        _ = try withUnsafePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                try syscall("bind") { bind(fd, socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = try withUnsafeMutablePointer(to: &bound) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                try syscall("getsockname") { getsockname(fd, socketAddress, &length) }
            }
        }
        return Int(UInt16(bigEndian: bound.sin_port))
    }

    /// True when a TCP connection to 127.0.0.1:`port` succeeds.
    public static func accepts(port: Int) -> Bool {
        guard let fd = try? syscall("socket", { socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }) else { return false }
        defer { close(fd) }
        var address = loopbackAddress(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                (try? syscall("connect") { connect(fd, socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) }) != nil
            }
        }
        return connected
    }

    public static func loopbackAddress(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }
}
