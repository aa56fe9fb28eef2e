import Foundation
import StudioSystem
import Synchronization
import Testing
@testable import Control
import TestSupport

/// Calls `router` directly and returns the reply, waiting up to 5 s for one answered from another thread.
private func ask<Context>(_ router: ControlRouter<Context>, _ command: String, _ arguments: [String: JSONValue] = [:]) -> ControlReply? {
    let received = Mutex<ControlReply?>(nil)
    router.handle(ControlRequest(id: 1, command: command, arguments: arguments)) { reply in received.withLock { $0 = reply } }
    _ = waitUntil { received.withLock { $0 != nil } }
    return received.withLock { $0 }
}

private func error(of reply: ControlReply?) -> ControlError? {
    if case .failure(let error)? = reply?.outcome { return error }
    return nil
}

private func result(of reply: ControlReply?) -> JSONValue? {
    if case .success(let value)? = reply?.outcome { return value }
    return nil
}

/// Runs on a worker, deferred, or names its thread: the three ways a command runs.
private enum SlowCommand: ControlCommand {
    static let name = "slow"
    static let summary = "runs on the worker"
    static let execution = ControlExecution.worker
    struct Arguments: Decodable, Sendable { var limit: Int? }
    static func run(_ arguments: Arguments, in context: TestContext) -> [String: JSONValue] {
        ["thread": .string(currentThreadName()), "limit": arguments.limit.map(JSONValue.int) ?? .null]
    }
}

private enum LaterCommand: ControlCommand {
    static let name = "later"
    static let summary = "answers from another thread"
    static let execution = ControlExecution.deferred
    static func start(_ arguments: NoArguments, in context: TestContext,
                      reply: @escaping @Sendable (Result<[String: String], ControlError>) -> Void) {
        NamedThread.start(name: "test.later") { reply(.success(["by": currentThreadName()])) }
    }
}

@Suite struct ControlRouterTests {
    @Test func helpListsTheTableThenHelpAndTheServersOwnCommands() throws {
        let router = makeTestRouter()
        let reply = try #require(result(of: ask(router, "help")))
        let help = try reply.decode(HelpReply.self)
        #expect(help.commands.map(\.name) == ["echo", "thread", "notify", "switch", "help", "subscribe", "unsubscribe"])
        #expect(help.commands.first == ControlCommandInfo(name: "echo", summary: "answers its arguments"))
        #expect(help.commands.allSatisfy { !$0.summary.isEmpty })
        #expect(router.commands == help.commands)
    }

    @Test func unknownCommandsListEveryKnownOne() throws {
        let failure = try #require(error(of: ask(makeTestRouter(), "frobnicate")))
        #expect(failure.code == .unknownCommand)
        #expect(failure.message == #"unknown command "frobnicate" (known: echo, help, notify, subscribe, switch, thread, unsubscribe)"#)
    }

    @Test func argumentsAreDecodedWithErrorsNamingThem() throws {
        let router = makeTestRouter()
        #expect(error(of: ask(router, "switch")) == ControlError(.invalidArgument, #"switch: missing argument "camera""#))
        #expect(error(of: ask(router, "switch", ["camera": 7]))
            == ControlError(.invalidArgument, #"switch: argument "camera" must be a string, got a number"#))
        #expect(error(of: ask(router, "switch", ["camera": .null]))
            == ControlError(.invalidArgument, #"switch: argument "camera" must be a string, got null"#))
        #expect(error(of: ask(router, "switch", ["camera": "cam9"])) == ControlError(.unknownCamera, "no camera named cam9"))
        #expect(result(of: ask(router, "switch", ["camera": "cam2", "extra": true])) == ["camera": "cam2"], "unknown arguments are ignored")

        let worker = ControlRouter<TestContext>(commands: [SlowCommand.self])
        worker.attach(.shared)
        #expect(error(of: ask(worker, "slow", ["limit": 2.5]))
            == ControlError(.invalidArgument, #"slow: argument "limit" must be an integer, got a number"#))
        #expect(error(of: ask(worker, "slow", ["limit": "ten"]))
            == ControlError(.invalidArgument, #"slow: argument "limit" must be an integer, got a string"#))
        #expect(result(of: ask(worker, "slow", ["limit": .number(3)]))?["limit"] == 3)
        #expect(result(of: ask(worker, "slow", ["limit": .null]))?["limit"] == .null, "null is absent")
    }

    @Test func commandsAreUnavailableWithoutTheirContext() throws {
        let router = ControlRouter<TestContext>(commands: [EchoCommand.self])
        #expect(error(of: ask(router, "echo"))?.code == .unavailable)
        #expect(result(of: ask(router, "help")) != nil, "help needs no context")
        do {
            let context = TestContext()
            router.attach(context)
            #expect(result(of: ask(router, "echo", ["a": 1])) == ["a": 1])
        }
        // The router holds its context weakly: once its owner lets go, commands are unavailable again.
        #expect(error(of: ask(router, "echo"))?.code == .unavailable)
    }

    @Test func workerCommandsRunOnTheWorkerAndAnswerBusyWhenItIsFull() throws {
        let accepting = Mutex(true)
        let router = ControlRouter<TestContext>(commands: [SlowCommand.self, LaterCommand.self]) { job in
            guard accepting.withLock({ $0 }) else { return false }
            NamedThread.start(name: "test.worker") { job() }
            return true
        }
        router.attach(.shared)
        #expect(result(of: ask(router, "slow"))?["thread"] == "test.worker")
        accepting.withLock { $0 = false }
        #expect(error(of: ask(router, "slow")) == ControlError(.busy, "too many queries waiting; try again"))
        #expect(result(of: ask(router, "later")) == ["by": "test.later"], "deferred commands answer from where they finish")
    }
}

@Suite struct ControlCodingTests {
    struct Sample: Codable, Sendable {
        @Nullable var reason: String?
        var note: String?
        var path: String
        var at: Date
    }

    @Test func nullableIsNullAndPlainOptionalsAreLeftOut() throws {
        let at = Date(timeIntervalSince1970: 1_714_586_584.123)
        let value = try JSONValue(encoding: Sample(reason: nil, note: nil, path: "/a/b", at: at))
        #expect(value.jsonText == #"{"at":"2024-05-01T18:03:04.123Z","path":"/a/b","reason":null}"#)
        let text = String(decoding: try ControlCoding.encoder.encode(Sample(reason: "r", note: "n", path: "/a/b", at: at)), as: UTF8.self)
        #expect(text == #"{"at":"2024-05-01T18:03:04.123Z","note":"n","path":"/a/b","reason":"r"}"#, "sorted keys, slashes as they are")

        let decoded = try JSONValue.object(["path": "/x", "at": "2024-05-01T18:03:04.123Z"]).decode(Sample.self)
        #expect(decoded.reason == nil && decoded.note == nil && decoded.at == at, "a missing @Nullable key decodes as nil")
        #expect(try value.decode(Sample.self).at == at)
    }

    @Test func timestampsAreUTCWithMilliseconds() {
        #expect(ISO8601Time.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601Time.format(Date(timeIntervalSince1970: 951_782_400.5)) == "2000-02-29T00:00:00.500Z")
        #expect(ISO8601Time.format(Date(timeIntervalSince1970: -0.001)) == "1969-12-31T23:59:59.999Z")
        for milliseconds: Int64 in [0, 1, 999, 1_714_586_584_123, 4_102_444_799_999] {
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            #expect(ISO8601Time.parse(ISO8601Time.format(date)) == date)
        }
        #expect(ISO8601Time.parse("2024-05-01T18:03:04Z") == Date(timeIntervalSince1970: 1_714_586_584))
        #expect(ISO8601Time.parse("yesterday") == nil)
    }
}
