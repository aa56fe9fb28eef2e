import Foundation
import Testing
import StudioCore
import StudioSystem
import TestSupport
@testable import HTTPConsole

/// The console over HTTPS (a certificate made by the real `openssl`, requests by the real `curl`) and
/// on IPv6, on loopback.
@Suite struct HTTPConsoleTLSTests {
    let place: TLSTestDirectory
    var directory: URL { place.url }
    var files: TLSTestFiles { place.files }

    init() throws { place = try TLSTestDirectory() }

    static func credentials(_ files: TLSTestFiles, key: String? = nil) throws -> HTTPTLSCredentials {
        let keyPath = key ?? files.key
        return HTTPTLSCredentials(certificatePEM: Array(try Data(contentsOf: URL(fileURLWithPath: files.certificate))),
                                  keyPEM: Array(try Data(contentsOf: URL(fileURLWithPath: keyPath))),
                                  certificateName: files.certificate, keyName: keyPath)
    }

    @Test func thisLibmicrohttpdSpeaksTLS() {
        #expect(HTTPConsole.supportsTLS, "Debian's libmicrohttpd12 is built with GnuTLS; without it http.tls_cert says so at start")
    }

    @Test func answersOverHTTPSAndOnlyHTTPS() throws {
        let rig = try ConsoleRig(token: "secret-token-0123456789", tls: try Self.credentials(files))
        let base = "https://127.0.0.1:\(rig.port)"
        let status = try TLSTestFiles.curl(base + "/api/v1/status", caCertificate: files.certificate,
                                           headers: ["Authorization": "Bearer secret-token-0123456789"])
        #expect(status.exitStatus == 0 && status.status == 200 && status.body.contains("\"route\":\"status\""), "\(status)")
        // The certificate is checked: without it as CA, curl refuses the self-signed one.
        let untrusted = try TLSTestFiles.curl(base + "/api/v1/status", caCertificate: nil)
        #expect(untrusted.exitStatus != 0 && untrusted.status == 0, "\(untrusted)")
        // Plain HTTP to the TLS port gets no HTTP answer.
        let plain = try HTTPTestClient(port: rig.port)
        try plain.send(HTTPTestClient.requestBytes("GET", "/api/v1/status", headers: ["Authorization": "Bearer secret-token-0123456789"]))
        let answer = plain.read(seconds: 5)
        #expect(!String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1."), "plain HTTP was answered: \(String(decoding: answer, as: UTF8.self))")
        // The token still rules over TLS.
        let wrong = try TLSTestFiles.curl(base + "/api/v1/status", caCertificate: files.certificate, headers: ["Authorization": "Bearer nope"])
        #expect(wrong.status == 401 && wrong.body.contains("unauthorized"), "\(wrong)")
        #expect(try TLSTestFiles.curl(base + "/api/v1/status", caCertificate: files.certificate).status == 401)
    }

    @Test func postsFromTheHTTPSOriginPassAndOthersAreRefused() throws {
        let rig = try ConsoleRig(tls: try Self.credentials(files))
        let base = "https://127.0.0.1:\(rig.port)"
        let same = try TLSTestFiles.curl(base + "/api/v1/later", method: "POST", caCertificate: files.certificate,
                                         headers: ["Origin": base], body: "{}")
        #expect(same.status == 200 && same.body.contains("\"route\":\"later\""), "\(same)")
        let foreign = try TLSTestFiles.curl(base + "/api/v1/later", method: "POST", caCertificate: files.certificate,
                                            headers: ["Origin": "https://evil.example"], body: "{}")
        #expect(foreign.status == 403 && foreign.body.contains("forbidden"), "\(foreign)")
        let plainOrigin = try TLSTestFiles.curl(base + "/api/v1/later", method: "POST", caCertificate: files.certificate,
                                                headers: ["Origin": "http://127.0.0.1:\(rig.port)"], body: "{}")
        #expect(plainOrigin.status == 403, "an http:// page is not this HTTPS console: \(plainOrigin)")
    }

    @Test func aKeyThatIsNotTheCertificatesStopsTheStartNamingBothFiles() throws {
        let other = try TLSTestFiles(directory: directory, name: "other")
        do {
            _ = try ConsoleRig(tls: try Self.credentials(files, key: other.key))
            Issue.record("started with another certificate's key")
        } catch let error as HTTPConsoleError {
            #expect(error.concernsTLS, "\(error)")
            #expect(error.description.contains(files.certificate) && error.description.contains(other.key), "\(error)")
            #expect(error.description.contains("the key does not belong to that certificate"), "\(error)")
        }
    }

    @Test func anAddressThatCannotBeBoundSaysWhy() throws {
        let holder = try ConsoleRig()
        do {
            _ = try ConsoleRig(listen: ListenAddress(host: "127.0.0.1", port: UInt16(holder.port)))
            Issue.record("a second console bound the same port")
        } catch let error as HTTPConsoleError {
            #expect(error.description == "cannot listen on 127.0.0.1:\(holder.port) (Address already in use)" && !error.concernsTLS, "\(error)")
        }
        guard HTTPTestClient.hasIPv6Loopback else { return }
        do {
            _ = try ConsoleRig(listen: ListenAddress(host: "2001:db8::1", port: 0))
            Issue.record("bound an address this machine does not have")
        } catch let error as HTTPConsoleError {
            #expect(error.description.hasPrefix("cannot listen on [2001:db8::1]:0 (") && error.description.contains("address"), "\(error)")
        }
    }

    @Test func originPolicyFollowsTheListenersScheme() {
        let tls = HTTPAccessPolicy(token: nil, isTLS: true)
        #expect(tls.refusal(method: "POST", authorization: nil, queryToken: nil, host: "127.0.0.1:8443", origin: "https://127.0.0.1:8443") == nil)
        #expect(tls.refusal(method: "POST", authorization: nil, queryToken: nil, host: "127.0.0.1:8443", origin: "http://127.0.0.1:8443") != nil)
        // Plain HTTP behind a proxy that terminates TLS: the browser's origin is https, the Host passed through.
        let plain = HTTPAccessPolicy(token: "0123456789abcdef")
        #expect(plain.refusal(method: "POST", authorization: "Bearer 0123456789abcdef", queryToken: nil, host: "studio.lan",
                              origin: "https://studio.lan") == nil)
        #expect(HTTPAccessPolicy.isLoopbackHost("[::1]:8080") && !HTTPAccessPolicy.isLoopbackHost("[::]:8080")
                && !HTTPAccessPolicy.isLoopbackHost("[fd00::2]:8080"))
    }

    @Test func listensOnIPv6Loopback() throws {
        guard HTTPTestClient.hasIPv6Loopback else {
            print("skipped: this machine has no IPv6 loopback (::1) to listen on")
            return
        }
        let rig = try ConsoleRig(listen: ListenAddress(host: "::1", port: 0))
        #expect(rig.port > 0)
        let status = try HTTPTestClient(host: "::1", port: rig.port).request("GET", "/api/v1/status", host: "[::1]:\(rig.port)")
        #expect(status.status == 200 && status.text.contains("\"route\":\"status\""), "\(status)")
        #expect((try? HTTPTestClient(host: "127.0.0.1", port: rig.port)) == nil, "[::1] is IPv6 only, not 127.0.0.1")
        let post = try HTTPTestClient(host: "::1", port: rig.port).request("POST", "/api/v1/later", headers: ["Origin": "http://[::1]:\(rig.port)"],
                                                                           host: "[::1]:\(rig.port)")
        #expect(post.status == 200, "the console's own [::1] origin: \(post)")
    }

    @Test func everyInterfaceOnIPv6IsDualStackOverTLS() throws {
        guard HTTPTestClient.hasIPv6Loopback else {
            print("skipped: this machine has no IPv6 loopback (::1) to listen on")
            return
        }
        let rig = try ConsoleRig(token: "secret-token-0123456789", listen: ListenAddress(host: "::", port: 0), tls: try Self.credentials(files))
        for host in ["127.0.0.1", "[::1]"] {
            let url = "https://\(host):\(rig.port)/api/v1/status"
            let status = try TLSTestFiles.curl(url, caCertificate: files.certificate, headers: ["Authorization": "Bearer secret-token-0123456789"])
            #expect(status.status == 200, "\(url): \(status)")
            #expect(try TLSTestFiles.curl(url, caCertificate: files.certificate).status == 401, "\(url) without the token")
        }
    }
}
