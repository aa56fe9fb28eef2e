import Foundation
import StudioSystem
import Synchronization
import Testing
@testable import Control
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

@Suite(.serialized) struct ControlServerTests {
    @Test func requestRoundTripOnTheControlThread() throws {
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try server.start()
        defer { server.stop() }
        let client = try ControlClient(socketPath: directory.socketPath)
        let result = try client.request("echo", arguments: ["camera": "cam2", "n": 3])
        #expect(result == ["camera": "cam2", "n": 3])
        #expect(try client.request("thread") == "studio.control")
        #expect(try client.request("switch", arguments: ["camera": "cam1"]) == ["camera": "cam1"])
    }

    @Test func errorRepliesCarryCodeAndMessage() throws {
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try server.start()
        defer { server.stop() }
        let client = try ControlClient(socketPath: directory.socketPath)
        #expect(throws: ControlError(.unknownCamera, "no camera named cam9")) {
            try client.request("switch", arguments: ["camera": "cam9"])
        }
        do {
            try client.request("switch", arguments: ["camera": 7])
            Issue.record("expected invalid_argument")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("camera"))
        }
        do {
            try client.request("frobnicate")
            Issue.record("expected unknown_command")
        } catch {
            #expect(error.code == .unknownCommand)
            #expect(error.message.contains("frobnicate") && error.message.contains("switch"))
        }
        // The connection still works.
        #expect(try client.request("echo", arguments: ["ok": true]) == ["ok": true])
    }

    @Test func replyDeliveredLaterFromAnotherThread() throws {
        let directory = SocketDirectory()
        let handlerThread = Mutex("")
        let server = ControlServer(socketPath: directory.socketPath) { request, reply in
            handlerThread.withLock { $0 = currentThreadName() }
            NamedThread.start(name: "test.cutter") {
                MonotonicClock.sleep(seconds: 0.05)
                reply(.success(["applied": .string(request.command), "by": .string(currentThreadName())]))
                reply(.failure(.internal, "a second reply must be ignored"))
            }
        }
        try server.start()
        defer { server.stop() }
        let client = try ControlClient(socketPath: directory.socketPath)
        #expect(try client.request("cut") == ["applied": "cut", "by": "test.cutter"])
        #expect(try client.request("cut2") == ["applied": "cut2", "by": "test.cutter"])
        #expect(handlerThread.withLock { $0 } == "studio.control")
    }

    @Test func handlerThatNeverRepliesYieldsInternalError() throws {
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath) { _, _ in }
        try server.start()
        defer { server.stop() }
        let client = try ControlClient(socketPath: directory.socketPath)
        do {
            try client.request("forgotten")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .internal)
            #expect(error.message.contains("forgotten"))
        }
    }

    @Test func badInputGetsAnErrorAndTheConnectionKeepsWorking() throws {
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try server.start()
        defer { server.stop() }
        let raw = try RawConnection(path: directory.socketPath)

        func expectError(after input: String, code: String, id: JSONValue = .null) throws {
            try raw.write(input)
            let reply = try #require(try raw.readMessage())
            #expect(reply["ok"] == false, "\(input.prefix(40))")
            #expect(reply["error"]?["code"]?.stringValue == code, "\(input.prefix(40))")
            #expect(reply["id"] == id, "\(input.prefix(40))")
            #expect(reply["error"]?["message"]?.stringValue?.isEmpty == false)
            // The same connection still answers a good request.
            try raw.write(#"{"id": "after", "command": "echo", "arguments": {"x": 1}}"# + "\n")
            let good = try #require(try raw.readMessage())
            #expect(good == ["id": "after", "ok": true, "result": ["x": 1]], "\(input.prefix(40))")
        }

        try expectError(after: "this is not json\n", code: "bad_request")
        try expectError(after: "[1, 2, 3]\n", code: "bad_request")
        try expectError(after: "\"just a string\"\n", code: "bad_request")
        try expectError(after: #"{"command": "echo"}"# + "\n", code: "bad_request")
        try expectError(after: #"{"id": [1], "command": "echo"}"# + "\n", code: "bad_request")
        try expectError(after: #"{"id": 5}"# + "\n", code: "bad_request", id: 5)
        try expectError(after: #"{"id": 6, "command": 12}"# + "\n", code: "bad_request", id: 6)
        try expectError(after: #"{"id": 7, "command": "echo", "arguments": [1]}"# + "\n", code: "bad_request", id: 7)
        try expectError(after: #"{"id": 8, "command": "nope"}"# + "\n", code: "unknown_command", id: 8)
        // Over 64 KiB: one too_large reply, the rest of that line is discarded.
        let huge = #"{"id": 9, "command": "echo", "arguments": {"blob": ""# + String(repeating: "a", count: 70_000) + "\"}}\n"
        try expectError(after: huge, code: "too_large")
        // Exactly at the limit is accepted (it fails only as JSON here).
        try expectError(after: String(repeating: "b", count: 64 * 1024) + "\n", code: "bad_request")
    }

    @Test func oversizedMessageSentInPiecesThenAGoodOneInTheSameWrite() throws {
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try server.start()
        defer { server.stop() }
        let raw = try RawConnection(path: directory.socketPath)
        let piece = String(repeating: "z", count: 30_000)
        for _ in 0..<4 { try raw.write(piece) }
        try raw.write("still the same line\n" + #"{"id": 1, "command": "echo", "arguments": {"v": "next"}}"# + "\n")
        let first = try #require(try raw.readMessage())
        #expect(first["error"]?["code"] == "too_large")
        let second = try #require(try raw.readMessage())
        #expect(second == ["id": 1, "ok": true, "result": ["v": "next"]])
    }

    @Test func clientDisconnectingMidMessageHarmsNoOne() throws {
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try server.start()
        defer { server.stop() }
        let other = try ControlClient(socketPath: directory.socketPath)
        do {
            let raw = try RawConnection(path: directory.socketPath)
            try raw.write(#"{"id": 1, "comm"#)
        }
        #expect(waitUntil { server.clientCount == 1 })
        #expect(try other.request("echo", arguments: ["still": "here"]) == ["still": "here"])
    }

    @Test func halfClosedClientStillGetsItsLateReply() throws {
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath) { request, reply in
            NamedThread.start(name: "test.late") {
                MonotonicClock.sleep(seconds: 0.05)
                reply(.success(.string(request.command)))
            }
        }
        try server.start()
        defer { server.stop() }
        let raw = try RawConnection(path: directory.socketPath)
        try raw.write(#"{"id": 1, "command": "late"}"# + "\n")
        try raw.shutdownWriting()
        #expect(try raw.readMessage() == ["id": 1, "ok": true, "result": "late"])
        // Then the server closes the connection: nothing more is owed.
        #expect(try raw.readLine() == nil)
    }

    @Test func severalClientsAtOnce() throws {
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try server.start()
        defer { server.stop() }
        let failures = Mutex<[String]>([])
        let successes = Mutex(0)
        let threads = (0..<6).map { index in
            NamedThread.start(name: "test.client\(index)") {
                do {
                    let client = try ControlClient(socketPath: directory.socketPath)
                    for round in 0..<25 {
                        let result = try client.request("echo", arguments: ["client": .int(index), "round": .int(round)])
                        if result == ["client": .int(index), "round": .int(round)] {
                            successes.withLock { $0 += 1 }
                        } else {
                            failures.withLock { $0.append("client \(index) round \(round): \(result)") }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("client \(index): \(error)") }
                }
            }
        }
        for thread in threads { #expect(thread.join(timeoutSeconds: 30)) }
        #expect(failures.withLock { $0 } == [])
        #expect(successes.withLock { $0 } == 150)
    }

    @Test func broadcastReachesSubscribersOnly() throws {
        let directory = SocketDirectory()
        let context = TestContext()
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter(context))
        context.server = server
        try server.start()
        defer { server.stop() }
        let watcher = try ControlClient(socketPath: directory.socketPath)
        let bystander = try RawConnection(path: directory.socketPath)
        try bystander.write(#"{"id": 1, "command": "echo"}"# + "\n")
        #expect(try bystander.readMessage()?["ok"] == true)

        #expect(try watcher.request("subscribe") == ["subscribed": true])
        NamedThread.start(name: "test.broadcast") { server.broadcast(["kind": "tick", "n": 1]) }
        let notifier = try ControlClient(socketPath: directory.socketPath)
        #expect(try notifier.request("notify", arguments: ["text": "hello"]) == ["notified": true])
        server.broadcast(StudioEvent(kind: .cameraLost, camera: "cam2"))

        var events: [JSONValue] = []
        try watcher.subscribe(eventTimeoutSeconds: 5) { event in
            events.append(event)
            return events.count < 3
        }
        #expect(events.contains(["kind": "tick", "n": 1]))
        #expect(events.contains(["kind": "note", "text": "hello"]))
        #expect(events.contains { $0["kind"] == "camera_lost" && $0["camera"] == "cam2" })

        // The bystander never subscribed: its next line is the reply to its next request, no event.
        try bystander.write(#"{"id": 2, "command": "echo"}"# + "\n")
        #expect(try bystander.readMessage() == ["id": 2, "ok": true, "result": [:]])

        // After unsubscribe, the watcher gets no more events.
        #expect(try watcher.request("unsubscribe") == ["subscribed": false])
        server.broadcast(["kind": "ignored"])
        #expect(try watcher.request("echo", arguments: ["last": true]) == ["last": true])
    }

    @Test func slowSubscriberIsDroppedWithoutStallingOthers() throws {
        let directory = SocketDirectory()
        var limits = ControlServer.Limits()
        limits.maxWriteBufferBytes = 64 * 1024
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter(), limits: limits)
        try server.start()
        defer { server.stop() }
        let sleeper = try RawConnection(path: directory.socketPath)
        try sleeper.write(#"{"id": 1, "command": "subscribe"}"# + "\n")
        #expect(try sleeper.readMessage()?["ok"] == true)
        let active = try ControlClient(socketPath: directory.socketPath)
        #expect(waitUntil { server.clientCount == 2 })

        // Far more than the kernel's socket buffer plus the 64 KiB limit; the sleeper reads nothing.
        let blob = JSONValue.string(String(repeating: "x", count: 16 * 1024))
        for n in 0..<200 { server.broadcast(["n": .int(n), "blob": blob]) }
        #expect(waitUntil { server.droppedClientCount == 1 })
        #expect(waitUntil { server.clientCount == 1 })
        #expect(try active.request("echo", arguments: ["alive": true]) == ["alive": true])
    }

    @Test func clientsBeyondTheLimitAreToldBusyWhenNoneIsIdle() throws {
        let directory = SocketDirectory()
        var limits = ControlServer.Limits()
        limits.maxClients = 2
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter(), limits: limits)
        try server.start()
        defer { server.stop() }
        let first = try ControlClient(socketPath: directory.socketPath)
        let second = try ControlClient(socketPath: directory.socketPath)
        #expect(try first.request("echo") == [:])
        #expect(try second.request("echo") == [:])
        // Subscribers are never closed to make room (idle ones would be: see IdleClientTests).
        #expect(try first.request("subscribe") == ["subscribed": true])
        #expect(try second.request("subscribe") == ["subscribed": true])
        let third = try ControlClient(socketPath: directory.socketPath)
        do {
            try third.request("echo")
            Issue.record("expected busy")
        } catch {
            #expect(error.code == .busy)
        }
        #expect(try first.request("echo", arguments: ["a": 1]) == ["a": 1])
    }

    @Test func requestTimesOut() throws {
        let directory = SocketDirectory()
        let held = Mutex<[@Sendable (ControlReply) -> Void]>([])
        let server = ControlServer(socketPath: directory.socketPath) { request, reply in
            if request.command == "hang" {
                held.withLock { $0.append(reply) }  // answered only at the end of the test
            } else {
                reply(.success(.string(request.command)))
            }
        }
        try server.start()
        defer { server.stop() }
        let client = try ControlClient(socketPath: directory.socketPath)
        do {
            try client.request("hang", timeoutSeconds: 0.1)
            Issue.record("expected a timeout")
        } catch {
            #expect(error.code == .timeout)
        }
        // The late reply to the timed-out request is skipped; the next request gets its own.
        for reply in held.withLock({ $0 }) { reply(.success("late")) }
        #expect(try client.request("next") == "next")
    }

    @Test func noServerErrorNamesThePath() throws {
        let directory = SocketDirectory()
        do {
            _ = try ControlClient(socketPath: directory.socketPath)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .noServer)
            #expect(error.message == "no studio server is listening on \(directory.socketPath) (is `studio serve` running?)")
        }
    }

    @Test func secondServerOnALivePathIsRefused() throws {
        let directory = SocketDirectory()
        let first = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try first.start()
        defer { first.stop() }
        let second = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        #expect(throws: ControlServerError.alreadyRunning(path: directory.socketPath)) { try second.start() }
        #expect(ControlServerError.alreadyRunning(path: "/x.sock").description.contains("/x.sock"))
        // The first server is untouched (its socket file too).
        let client = try ControlClient(socketPath: directory.socketPath)
        #expect(try client.request("echo", arguments: ["first": true]) == ["first": true])
        // Once the first one stops, the refused server can start after all.
        first.stop()
        try second.start()
        defer { second.stop() }
        let again = try ControlClient(socketPath: directory.socketPath)
        #expect(try again.request("echo", arguments: ["second": true]) == ["second": true])
    }

    @Test func staleSocketFileIsReplacedAndOtherFilesAreNot() throws {
        let directory = SocketDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        // A socket file left by a server that died: bound, never listening, closed without unlink.
        let orphan = try UnixSocket.makeStreamSocket()
        try UnixSocket.bind(orphan, to: UnixSocket.address(for: directory.socketPath)!)
        UnixSocket.close(orphan)
        #expect(FileManager.default.fileExists(atPath: directory.socketPath))
        #expect(throws: ControlError.self) { try ControlClient(socketPath: directory.socketPath) }

        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try server.start()
        let client = try ControlClient(socketPath: directory.socketPath)
        #expect(try client.request("echo", arguments: ["fresh": true]) == ["fresh": true])
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: directory.socketPath))

        // A regular file at the path is never deleted.
        #expect(FileManager.default.createFile(atPath: directory.socketPath, contents: Data("keep".utf8)))
        let refused = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        #expect(throws: ControlServerError.notASocket(path: directory.socketPath)) { try refused.start() }
        #expect(FileManager.default.contents(atPath: directory.socketPath) == Data("keep".utf8))
    }

    @Test func socketIsOwnerOnlyAndItsDirectoryIsCreatedPrivate() throws {
        let directory = SocketDirectory()
        let nested = directory.path + "/a/b/control.sock"
        let server = ControlServer(socketPath: nested, handler: makeTestRouter())
        try server.start()
        defer { server.stop() }
        var info = stat()
        try syscall("stat") { stat(nested, &info) }
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_mode & 0o777 == 0o600)
        for created in [directory.path, directory.path + "/a", directory.path + "/a/b"] {
            try syscall("stat") { stat(created, &info) }
            #expect(info.st_mode & 0o777 == 0o700, "\(created)")
        }
    }

    /// An operator group (here Debian's `nogroup`, any group other than ours would do): the socket is
    /// 0660 in that group, directories the server creates are 0750 in it, and the existing parent
    /// directory is left as it was.
    @Test func socketCanBeOpenedToAnOperatorGroup() throws {
        let operators = try #require(getgrnam("nogroup")?.pointee.gr_gid, "Debian has a nogroup group")
        let directory = SocketDirectory()
        let nested = directory.path + "/a/control.sock"
        try FileManager.default.createDirectory(atPath: "/tmp/studio-control-tests", withIntermediateDirectories: true)
        var info = stat()
        try syscall("stat") { stat("/tmp/studio-control-tests", &info) }
        let parentBefore = (info.st_mode, info.st_gid)
        let server = ControlServer(socketPath: nested, handler: makeTestRouter(), group: operators)
        try server.start()
        defer { server.stop() }
        try syscall("stat") { stat(nested, &info) }
        #expect(info.st_mode & S_IFMT == S_IFSOCK && info.st_mode & 0o777 == 0o660 && info.st_gid == operators)
        for created in [directory.path, directory.path + "/a"] {
            try syscall("stat") { stat(created, &info) }
            #expect(info.st_mode & 0o777 == 0o750 && info.st_gid == operators, "\(created)")
        }
        try syscall("stat") { stat("/tmp/studio-control-tests", &info) }
        #expect(info.st_mode == parentBefore.0 && info.st_gid == parentBefore.1, "an existing directory is not changed")
        let client = try ControlClient(socketPath: nested)
        #expect(try client.request("echo", arguments: ["n": 1]) == ["n": 1])
    }

    @Test func stopClosesClientsAndRemovesTheSocket() throws {
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try server.start()
        #expect(server.isRunning)
        let client = try ControlClient(socketPath: directory.socketPath)
        #expect(try client.request("echo") == [:])
        server.stop()
        #expect(!server.isRunning)
        #expect(!FileManager.default.fileExists(atPath: directory.socketPath))
        #expect(throws: ControlError.self) { try client.request("echo", timeoutSeconds: 2) }
        #expect(throws: ControlServerError.alreadyStarted) { try server.start() }
        server.broadcast(["after": "stop"])  // harmless
        server.stop()  // idempotent
    }

    @Test func stopFromAHandlerDoesNotDeadlock() throws {
        let directory = SocketDirectory()
        let box = Mutex<ControlServer?>(nil)
        let server = ControlServer(socketPath: directory.socketPath) { _, reply in
            reply(.success("stopping"))
            box.withLock { $0 }?.stop()
        }
        box.withLock { $0 = server }
        try server.start()
        let raw = try RawConnection(path: directory.socketPath)
        try raw.write(#"{"id": 1, "command": "quit"}"# + "\n")
        // The stop closes the connection; the reply may or may not have been flushed first.
        while try raw.readLine() != nil {}
        #expect(waitUntil { !FileManager.default.fileExists(atPath: directory.socketPath) })
        server.stop()
        box.withLock { $0 = nil }
    }

    @Test func badPathsAreRejectedClearly() {
        let long = "/tmp/" + String(repeating: "d", count: 120) + "/s.sock"
        #expect(throws: ControlServerError.self) { try ControlServer(socketPath: long, handler: makeTestRouter()).start() }
        #expect(throws: ControlServerError.self) { try ControlServer(socketPath: "relative.sock", handler: makeTestRouter()).start() }
        do {
            _ = try ControlClient(socketPath: long)
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains(long))
        }
    }
}
