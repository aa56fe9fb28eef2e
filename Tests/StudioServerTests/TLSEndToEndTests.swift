import Foundation
import Testing
import Control
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The real `studio serve` over HTTPS (`http.tls_cert` / `http.tls_key`, a certificate made by the
/// real `openssl`, requests by the real `curl`) and on IPv6 loopback.
@Suite struct TLSEndToEndTests {
    /// A config in the harness's directory with the TLS files next to it, given by relative paths.
    static func tlsConfig(_ studio: StudioHarness, extra: String = "") throws -> (config: String, files: TLSTestFiles) {
        let tls = studio.directory.appendingPathComponent("tls")
        try FileManager.default.createDirectory(at: tls, withIntermediateDirectories: true)
        let files = try TLSTestFiles(directory: tls)
        let config = studio.directory.appendingPathComponent("studio.yaml").path
        try "http:\n  tls_cert: tls/server.crt\n  tls_key: tls/server.key\n\(extra)".write(toFile: config, atomically: true, encoding: .utf8)
        return (config, files)
    }

    @Test func servesTheAPIOverHTTPSOnEveryInterfaceWithTheToken() throws {
        let studio = try StudioHarness()
        let (config, files) = try Self.tlsConfig(studio)
        chmod(files.key, 0o640)
        let port = try NginxRTMP.freePort()
        let server = try studio.serve(["--config", config, "--cameras", "1", "--http", "0.0.0.0:\(port)"] + EndToEndTests.smallProgram)
        let tokenFile = (studio.database as NSString).deletingLastPathComponent + "/http-token"
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let base = "https://127.0.0.1:\(port)"

        let status = try TLSTestFiles.curl(base + "/api/v1/status", caCertificate: files.certificate, headers: ["Authorization": "Bearer \(token)"])
        #expect(status.status == 200, "\(status)")
        let json = try JSONValue(parsing: Array(status.body.utf8))
        #expect(json["program"]?["frames"]?.intValue != nil, "the status JSON: \(status.body.prefix(300))")
        // TLS does not replace the token on an address other than loopback.
        #expect(try TLSTestFiles.curl(base + "/api/v1/status", caCertificate: files.certificate).status == 401)
        let wrong = try TLSTestFiles.curl(base + "/api/v1/status", caCertificate: files.certificate, headers: ["Authorization": "Bearer wrong-0123456789abcdef"])
        #expect(wrong.status == 401 && wrong.body.contains("unauthorized"), "\(wrong)")
        // A POST from the console's own https origin is a switch; another origin's is refused.
        let switched = try TLSTestFiles.curl(base + "/api/v1/switch", method: "POST", caCertificate: files.certificate,
                                             headers: ["Authorization": "Bearer \(token)", "Origin": base], body: "{\"source\":\"cam1\"}")
        #expect(switched.status == 200, "\(switched)")
        let foreign = try TLSTestFiles.curl(base + "/api/v1/cut", method: "POST", caCertificate: files.certificate,
                                            headers: ["Authorization": "Bearer \(token)", "Origin": "https://evil.example"], body: "{}")
        #expect(foreign.status == 403, "\(foreign)")
        // Plain HTTP on the port gets nothing that is HTTP.
        let plain = try HTTPTestClient(port: port)
        try plain.send(HTTPTestClient.requestBytes("GET", "/api/v1/status", headers: ["Authorization": "Bearer \(token)"]))
        #expect(!String(decoding: plain.read(seconds: 5), as: UTF8.self).hasPrefix("HTTP/1."))

        // The log says https, and that the key is readable by its group.
        let log = server.errorText()
        #expect(log.contains("HTTP API on https://0.0.0.0:\(port)/api/v1/") && log.contains("TLS with \(files.certificate)"), "\(log)")
        #expect(log.contains("warning: the TLS private key \(files.key) is readable by its group"), "\(log)")
        let doctor = try studio.run(["doctor", "--config", config, "--db", studio.database, "--http", "0.0.0.0:\(port)", "--cameras", "0"])
        #expect(doctor.output.contains("https://0.0.0.0:\(port)/api/v1/status") && doctor.output.contains("TLS with the certificate \(files.certificate)"),
                "\(doctor.output)")
        #expect(doctor.output.contains("is readable by its group"), "\(doctor.output)")
    }

    @Test func configMistakesStopTheStartWithTheFileAndLine() throws {
        let studio = try StudioHarness()
        let (config, files) = try Self.tlsConfig(studio)
        try "program:\n  fps: 30\nhttp:\n  tls_cert: tls/server.crt\n".write(toFile: config, atomically: true, encoding: .utf8)
        let port = try NginxRTMP.freePort()
        let alone = try studio.run(["serve", "--config", config, "--db", studio.database, "--socket", studio.socket, "--http", "127.0.0.1:\(port)"])
        #expect(alone.status != 0 && alone.error.contains("\(config):4: http.tls_cert: http.tls_key is missing"), "\(alone.error)")

        // A key that belongs to another certificate: the library refuses it, and the message names both files.
        let other = try TLSTestFiles(directory: studio.directory.appendingPathComponent("tls"), name: "other")
        try "http:\n  tls_cert: tls/server.crt\n  tls_key: tls/other.key\n".write(toFile: config, atomically: true, encoding: .utf8)
        let mismatch = try studio.run(["serve", "--config", config, "--db", studio.database, "--socket", studio.socket,
                                       "--http", "127.0.0.1:\(port)", "--cameras", "1"])
        #expect(mismatch.status != 0, "\(mismatch.error)")
        #expect(mismatch.error.contains("cannot serve the HTTP API over TLS") && mismatch.error.contains(files.certificate)
                && mismatch.error.contains(other.key) && mismatch.error.contains("does not belong to that certificate"), "\(mismatch.error)")
    }

    @Test func servesIPv6LoopbackWithoutAToken() throws {
        guard HTTPTestClient.hasIPv6Loopback else {
            print("skipped: this machine has no IPv6 loopback (::1) to listen on")
            return
        }
        let studio = try StudioHarness()
        let port = try NginxRTMP.freePort()
        let server = try studio.serve(["--cameras", "1", "--http", "[::1]:\(port)"] + EndToEndTests.smallProgram)
        let status = try HTTPTestClient(host: "::1", port: port).request("GET", "/api/v1/status", host: "[::1]:\(port)")
        #expect(status.status == 200 && (try? JSONValue(parsing: status.body))?["program"] != nil, "::1 is loopback: no token needed: \(status)")
        #expect(server.errorText().contains("HTTP API on http://[::1]:\(port)/api/v1/ (no token (loopback))"), "\(server.errorText())")
        let tokenFile = (studio.database as NSString).deletingLastPathComponent + "/http-token"
        #expect(!FileManager.default.fileExists(atPath: tokenFile), "no token generated for ::1")
    }
}
