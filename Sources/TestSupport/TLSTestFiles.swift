import Foundation

/// A self-signed certificate and its key, made by the real `openssl` CLI for a test (EC P-256, valid
/// for a day, for `localhost`, 127.0.0.1 and ::1), in `directory`; and `curl` to talk HTTPS to it.
public struct TLSTestFiles {
    public let certificate: String
    public let key: String

    /// Runs `openssl req -x509` into `directory` (`name`.crt / `name`.key, mode 0600 for the key).
    public init(directory: URL, name: String = "server") throws {
        certificate = directory.appendingPathComponent("\(name).crt").path
        key = directory.appendingPathComponent("\(name).key").path
        let result = try Self.run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                              "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=localhost",
                                              "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1"], directory: directory)
        guard result.status == 0 else { throw TLSTestError("openssl req failed (\(result.status)): \(result.error)") }
        chmod(key, 0o600)
    }

    public struct CurlResult: CustomStringConvertible {
        /// curl's exit status (0: a response came; 35: the TLS handshake failed; 52: empty reply...).
        public var exitStatus: Int32
        /// The HTTP status, 0 when none came.
        public var status: Int
        public var body: String
        public var error: String
        public var description: String { "curl \(exitStatus): HTTP \(status) \(body) \(error)" }
    }

    /// One request with the real `curl` (`-g` so `[::1]` is an address), trusting `caCertificate`.
    public static func curl(_ url: String, method: String = "GET", caCertificate: String?, headers: [String: String] = [:],
                            body: String? = nil, extra: [String] = []) throws -> CurlResult {
        var arguments = ["-sS", "-g", "--max-time", "10", "-X", method, "-o", "-", "-w", "\n%{http_code}"]
        if let caCertificate { arguments += ["--cacert", caCertificate] }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { arguments += ["-H", "\(name): \(value)"] }
        if let body { arguments += ["--data-binary", body] }
        let result = try run("curl", arguments + extra + [url], directory: nil)
        var lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        let code = lines.popLast().flatMap { Int($0) } ?? 0
        return CurlResult(exitStatus: result.status, status: code, body: lines.joined(separator: "\n"), error: result.error)
    }

    static func run(_ program: String, _ arguments: [String], directory: URL?) throws -> (status: Int32, output: String, error: String) {
        let child = try ChildProcess(executable: program, arguments: arguments,
                                     outputDirectory: directory?.appendingPathComponent("\(program)-\(UUID().uuidString.prefix(6))"))
        guard let exit = child.wait(timeout: 30) else {
            _ = child.stop()
            throw TLSTestError("\(program) did not finish within 30 s")
        }
        let status: Int32 = switch exit { case .exited(let code): code; case .signalled(let signal): 128 + signal }
        return (status, child.outputText(), child.errorText())
    }
}

/// A temporary directory with a fresh certificate and key in `subdirectory` of it, removed with this object.
public final class TLSTestDirectory {
    public let url: URL
    public let files: TLSTestFiles

    public init(subdirectory: String = ".") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("studio-tls-\(UUID().uuidString.prefix(8))")
        let place = url.appendingPathComponent(subdirectory)
        try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)
        files = try TLSTestFiles(directory: place)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

public struct TLSTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
