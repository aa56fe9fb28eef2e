import Foundation
import StudioSystem
import Testing
@testable import Control
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// Idle connections cannot lock the operator out: a full server makes room by closing the client idle
/// the longest, and idle clients are closed after the idle timeout (subscribers never are).
@Suite(.serialized) struct IdleClientTests {
    @Test func aFullServerOfIdleClientsStillAnswersTheOperator() throws {
        let directory = SocketDirectory()
        var limits = ControlServer.Limits()
        limits.maxClients = 4
        limits.idleTimeoutSeconds = 3600  // only the room-making is under test
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter(), limits: limits)
        try server.start()
        defer { server.stop() }
        var idle: [RawConnection] = []
        for _ in 0..<limits.maxClients {
            idle.append(try RawConnection(path: directory.socketPath))
            let count = idle.count
            // One at a time, so the first is the one idle the longest.
            #expect(waitUntil { server.clientCount == count })
        }
        let operatorClient = try ControlClient(socketPath: directory.socketPath)
        #expect(try operatorClient.request("echo", arguments: ["status": true]) == ["status": true])
        #expect(server.clientCount == limits.maxClients)
        let notice = try #require(try idle[0].readMessage())
        #expect(notice["error"]?["code"] == "idle" && notice["id"] == .null, "\(notice)")
        #expect(try idle[0].readLine() == nil, "then closed")
        // The others are still connected.
        try idle[1].write(#"{"id": 7, "command": "echo"}"# + "\n")
        #expect(try idle[1].readMessage()?["id"] == 7)
    }

    @Test func idleClientsAreClosedAfterTheTimeoutSubscribersStay() throws {
        let directory = SocketDirectory()
        var limits = ControlServer.Limits()
        limits.idleTimeoutSeconds = 0.3
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter(), limits: limits)
        try server.start()
        defer { server.stop() }
        let subscriber = try RawConnection(path: directory.socketPath)
        try subscriber.write(#"{"id": 1, "command": "subscribe"}"# + "\n")
        #expect(try subscriber.readMessage()?["result"]?["subscribed"] == true)
        let quiet = try RawConnection(path: directory.socketPath)
        let talker = try RawConnection(path: directory.socketPath)
        try talker.write(#"{"id": 2, "command": "echo"}"# + "\n")
        #expect(try talker.readMessage()?["id"] == 2)
        #expect(waitUntil { server.clientCount == 1 }, "the two idle clients are closed")
        for client in [quiet, talker] {
            let notice = try #require(try client.readMessage())
            #expect(notice["error"]?["code"] == "idle", "\(notice)")
            #expect(notice["error"]?["message"]?.stringValue?.contains("0.3 s without a request") == true, "\(notice)")
            #expect(try client.readLine() == nil)
        }
        server.broadcast(["still": "here"])
        #expect(try subscriber.readMessage()?["event"] == ["still": "here"])
    }
}
