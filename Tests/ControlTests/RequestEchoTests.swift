import Foundation
import StudioSystem
import Testing
@testable import Control

/// What comes back for odd requests: ids exactly as sent, and invalid UTF-8 named as such.
@Suite struct RequestEchoTests {
    @Test func idsAreEchoedExactlyAsTheClientWroteThem() throws {
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try server.start()
        defer { server.stop() }
        let raw = try RawConnection(path: directory.socketPath)
        for id in ["18446744073709551616", "1.50", "-0", "2.5e300", "12345678901234567890123", "7", #""a\"}""#] {
            try raw.write(#"{"arguments": {"x": {"id": 1, "s": "}\""}}, "id": \#(id), "command": "echo"}"# + "\n")
            let line = try #require(try raw.readLine())
            #expect(line.hasPrefix(#"{"id":\#(id),"ok":true,"result":"#), "\(id): \(line)")
        }
        try raw.write(#"{"id": 18446744073709551616, "command": "frobnicate"}"# + "\n")
        let error = try #require(try raw.readLine())
        #expect(error.hasPrefix(#"{"error":{"code":"unknown_command""#) && error.hasSuffix(#""id":18446744073709551616,"ok":false}"#), "\(error)")
    }

    @Test func rawMemberFindsTheTopLevelKeyOnly() {
        let text = Array(#" { "x" : {"id": 1}, "s": "\"id\": 2", "id" : 3.0 , "y": [1, {"id": 4}] }"#.utf8)
        #expect(RequestID.rawMember("id", in: text) == "3.0")
        #expect(RequestID.rawMember("id", in: Array(#"{"x": 1}"#.utf8)) == nil)
    }

    @Test func invalidUTF8IsSaidPlainly() throws {
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try server.start()
        defer { server.stop() }
        let raw = try RawConnection(path: directory.socketPath)
        try raw.write(Array(#"{"id": 1, "command": "echo", "arguments": {"a": ""#.utf8) + [0xFF, 0xFE] + Array("\"}}\n".utf8))
        let reply = try #require(try raw.readMessage())
        #expect(reply["error"]?["code"] == "bad_request", "\(reply)")
        #expect(reply["error"]?["message"] == "malformed JSON: the text is not valid UTF-8 (at byte 50); send JSON as UTF-8 text", "\(reply)")
        try raw.write(#"{"id": 2, "command": "echo"}"# + "\n")
        #expect(try raw.readMessage()?["id"] == 2, "the connection goes on")
    }
}
