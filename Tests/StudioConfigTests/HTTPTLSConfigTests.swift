import Foundation
import Testing
import StudioCore
import TestSupport
@testable import StudioConfig

/// `http.tls_cert` / `http.tls_key` against real PEM files made by `openssl`, and IPv6 in `http.listen`.
@Suite struct HTTPTLSConfigTests {
    let place: TLSTestDirectory
    var directory: URL { place.url }
    var files: TLSTestFiles { place.files }

    init() throws { place = try TLSTestDirectory(subdirectory: "tls") }

    /// Writes `yaml` as studio.yaml in the test's directory and loads it (relative paths from there).
    func load(_ yaml: String) throws -> StudioConfiguration {
        let path = directory.appendingPathComponent("studio.yaml").path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return try StudioConfiguration.load(path: path)
    }

    func loadError(_ yaml: String) throws -> ConfigError {
        do {
            let config = try load(yaml)
            throw TLSTestError("accepted: \(config.http)")
        } catch let error as ConfigError {
            return error
        }
    }

    @Test func readsBothFilesRelativeToTheConfigsDirectory() throws {
        let config = try load("http:\n  listen: 127.0.0.1:8443\n  tls_cert: tls/server.crt\n  tls_key: tls/server.key\n")
        #expect(config.http.tls == HTTPSettings.TLSFiles(certificate: directory.path + "/tls/server.crt", key: directory.path + "/tls/server.key"))
        #expect(config.http.scheme == "https")
        let read = try #require(config.http.tls).read()
        #expect(String(decoding: read.certificate, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----"))
        #expect(String(decoding: read.key, as: UTF8.self).contains("PRIVATE KEY-----"))
        let snapshot = config.jsonSnapshot()
        #expect(snapshot.contains("\"tls_cert\":\"\(directory.path)/tls/server.crt\"") && !snapshot.contains("PRIVATE KEY"), "\(snapshot)")
        #expect(try load("http:\n  listen: 127.0.0.1:8443\n").http.scheme == "http")
    }

    @Test func oneWithoutTheOtherIsAnErrorAtItsLine() throws {
        let certOnly = try loadError("http:\n  listen: 127.0.0.1:8443\n  tls_cert: tls/server.crt\n")
        #expect(certOnly.line == 3 && certOnly.keyPath == "http.tls_cert" && certOnly.message.contains("http.tls_key is missing"), "\(certOnly)")
        #expect("\(certOnly)".hasPrefix(directory.path + "/studio.yaml:3: http.tls_cert: "), "\(certOnly)")
        let keyOnly = try loadError("http:\n  tls_key: tls/server.key\n")
        #expect(keyOnly.line == 2 && keyOnly.keyPath == "http.tls_key" && keyOnly.message.contains("http.tls_cert is missing"), "\(keyOnly)")
    }

    @Test func missingUnreadableAndNonPEMFilesAreNamed() throws {
        let missing = try loadError("http:\n  tls_cert: tls/nothing.crt\n  tls_key: tls/server.key\n")
        #expect(missing.line == 2 && missing.keyPath == "http.tls_cert" && missing.message.contains("certificate 'tls/nothing.crt' not found"), "\(missing)")

        let text = directory.appendingPathComponent("tls/notes.txt").path
        try "just some words\n".write(toFile: text, atomically: true, encoding: .utf8)
        let notPEM = try loadError("http:\n  tls_cert: tls/server.crt\n  tls_key: tls/notes.txt\n")
        #expect(notPEM.line == 3 && notPEM.keyPath == "http.tls_key" && notPEM.message.contains("is not a PEM private key"), "\(notPEM)")

        let der = directory.appendingPathComponent("tls/server.der").path
        try Data([0x30, 0x82, 0x01, 0x0A, 0x02, 0x82, 0x01, 0x01, 0x00, 0xC3]).write(to: URL(fileURLWithPath: der))
        let binary = try loadError("http:\n  tls_cert: tls/server.der\n  tls_key: tls/server.key\n")
        #expect(binary.line == 2 && binary.message.contains("is not PEM text"), "\(binary)")

        let swapped = try loadError("http:\n  tls_cert: tls/server.key\n  tls_key: tls/server.crt\n")
        #expect(swapped.line == 2 && swapped.message.contains("holds a private key, not a certificate (are tls_cert and tls_key swapped?)"), "\(swapped)")

        let locked = directory.appendingPathComponent("tls/locked.key").path
        try FileManager.default.copyItem(atPath: files.key, toPath: locked)
        chmod(locked, 0o000)
        defer { chmod(locked, 0o600) }
        if getuid() != 0 {  // root reads it anyway
            let unreadable = try loadError("http:\n  tls_cert: tls/server.crt\n  tls_key: tls/locked.key\n")
            #expect(unreadable.line == 3 && unreadable.message.contains("cannot be read: permission denied"), "\(unreadable)")
        }
    }

    @Test func anEncryptedKeyIsRefusedWithTheWayOut() throws {
        let encrypted = directory.appendingPathComponent("tls/encrypted.key").path
        try "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhhZm9v\n-----END ENCRYPTED PRIVATE KEY-----\n"
            .write(toFile: encrypted, atomically: true, encoding: .utf8)
        let error = try loadError("http:\n  tls_cert: tls/server.crt\n  tls_key: tls/encrypted.key\n")
        #expect(error.line == 3 && error.message.contains("is encrypted") && error.message.contains("openssl pkey"), "\(error)")
    }

    @Test func aKeyReadableByOthersIsReported() throws {
        let tls = HTTPSettings.TLSFiles(certificate: files.certificate, key: files.key)
        #expect(tls.keyExposure == nil, "0600 is the owner's alone")
        chmod(files.key, 0o640)
        #expect(tls.keyExposure?.contains("readable by its group (mode 640)") == true, "\(tls.keyExposure ?? "nil")")
        chmod(files.key, 0o644)
        #expect(tls.keyExposure?.contains("readable by every user") == true && tls.keyExposure?.contains("chmod 600") == true)
    }

    @Test func aReloadThatChangesTheTLSFilesIsRefusedByName() throws {
        let old = try load("http:\n  tls_cert: tls/server.crt\n  tls_key: tls/server.key\n")
        let other = try TLSTestFiles(directory: directory.appendingPathComponent("tls"), name: "other")
        let new = try load("http:\n  tls_cert: \(other.certificate)\n  tls_key: tls/server.key\n")
        #expect(old.changes(to: new).fixed == ["http.tls_cert"])
        let plain = try load("http:\n  listen: \"[::1]:8080\"\n")
        #expect(old.changes(to: plain).fixed == ["http.listen", "http.tls_cert", "http.tls_key"])
    }

    @Test func listensOnIPv6() throws {
        let loopback = try load("http:\n  listen: \"[::1]:8080\"\n")
        #expect(loopback.http.listen == ListenAddress(host: "::1", port: 8080) && loopback.http.listen.isLoopback)
        #expect(loopback.jsonSnapshot().contains("\"listen\":\"[::1]:8080\""))
        let every = try load("http:\n  listen: \"[::]:8080\"\n")
        #expect(!every.http.listen.isLoopback, "[::] is every interface: a token is needed")
        let unquoted = try loadError("http:\n  listen: [::1]:8080\n")
        #expect(unquoted.line == 2 && unquoted.message.contains("quote an IPv6 address with its port"), "\(unquoted)")
        let bare = try loadError("http:\n  listen: \"::1:8080\"\n")
        #expect(bare.line == 2 && bare.keyPath == "http.listen" && bare.message.contains("[::1]:8080"), "\(bare)")
    }
}
