#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import StudioCore
import StudioSystem

/// A capture node's view of its switcher's tally (`node.tally_from`): on its own thread
/// (`tally.from-switcher`) it reads the switcher's HTTP event stream (`GET /api/v1/events`, HTTP/1.0,
/// the token as `Authorization: Bearer`), takes the whole tally from each `tally` event (its `program`
/// and `preview` lists) and from `GET /api/v1/status` once connected. A refused, failed, closed or silent
/// connection (no byte, not even the stream's 15 s keepalive, for `silenceSeconds`) clears the tally
/// to `unknown` at once (never a stale red) and is tried again with a growing pause (0.5 s doubling to
/// 8 s). Nothing else waits for it: `tally(of:)` reads the newest state under a lock.
public final class SwitcherTallyClient: Sendable {
    public static let threadName = "tally.from-switcher"
    public let address: ListenAddress
    private let token: String?
    private let log: @Sendable (String) -> Void
    private let worker = WorkerThread()
    private let state = Mutex(State())
    /// Told after every change of the tally (the node's tally outputs' feed); must not block.
    private let watcher = Mutex<(@Sendable () -> Void)?>(nil)

    static let firstBackoff = 0.5, longestBackoff = 8.0
    /// Two of the switcher's keepalives missed (and some): the connection is taken as gone.
    public static let silenceSeconds = 40.0
    /// `silenceSeconds`, shorter in tests.
    private let silence: Double
    static let connectSeconds = 2.0

    /// What the switcher says of one source: `unknown` while the node has no connection to it.
    public enum Lamp: String, Sendable {
        case program, preview, both, none, unknown
    }

    struct State {
        var connected = false
        var program: Set<String> = []
        var preview: Set<String> = []
    }

    public init(address: ListenAddress, token: String?, silenceSeconds: Double = SwitcherTallyClient.silenceSeconds,
                log: @escaping @Sendable (String) -> Void) {
        self.address = address
        self.token = token
        self.silence = silenceSeconds
        self.log = log
    }

    public func start() { _ = worker.start(name: Self.threadName) { [self] in run() } }
    public func stop() { worker.stop() }

    public var isConnected: Bool { state.withLock { $0.connected } }

    /// `watch` is called (on the client's thread) after every change of the tally, the loss included.
    public func watch(_ watch: @escaping @Sendable () -> Void) { watcher.withLock { $0 = watch } }

    private func changed() { watcher.withLock { $0 }?() }

    /// The switcher's tally of `name` (its name there: `pc2/cam1`).
    public func tally(of name: String) -> Lamp {
        state.withLock { state in
            guard state.connected else { return .unknown }
            switch (state.program.contains(name), state.preview.contains(name)) {
            case (true, true): return .both
            case (true, false): return .program
            case (false, true): return .preview
            case (false, false): return .none
            }
        }
    }

    private func run() {
        var backoff = Self.firstBackoff
        var said: String? = nil
        while !worker.isStopRequested {
            let reason: String
            do {
                try follow { [self] in
                    log("tally from the switcher at http://\(address): connected")
                    said = nil
                    backoff = Self.firstBackoff
                }
                reason = "the connection closed"
            } catch let error as TallyFollowError {
                reason = error.reason
            } catch {
                reason = "\(error)"
            }
            let wasConnected = state.withLock { state in
                defer { state = State() }
                return state.connected
            }
            if wasConnected { changed() }
            if worker.isStopRequested { break }
            // Said once per loss (and once while it stays unreachable for the same reason), not every retry.
            if wasConnected || said != reason {
                log("tally from the switcher at http://\(address): \(wasConnected ? "lost" : "not connected") (\(reason)); "
                    + "the node's cameras show no switcher tally (unknown) until it is back")
                said = reason
            }
            MonotonicClock.monotonic.sleep(until: MonotonicClock.now() + UInt64(backoff * 1e9), unless: { worker.isStopRequested })
            backoff = min(backoff * 2, Self.longestBackoff)
        }
    }

    /// One connection to the event stream, until it ends (or a stop): throws why it ended.
    private func follow(connected: () -> Void) throws {
        let fd = try open("/api/v1/events")
        defer { close(fd) }
        var buffer: [UInt8] = []
        var headerDone = false
        var lastByte = MonotonicClock.now()
        while !worker.isStopRequested {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 250)
            guard let bytes = TallySockets.read(from: fd) else {
                if !headerDone { throw TallyFollowError("the switcher closed the connection without an answer") }
                return
            }
            let now = MonotonicClock.now()
            if bytes.isEmpty {
                if now - lastByte > UInt64(silence * 1e9) { throw TallyFollowError("nothing heard for \(HTTPExchange.formatted(silence)) s") }
                continue
            }
            lastByte = now
            buffer += bytes
            if !headerDone {
                guard let end = HTTPExchange.headerEnd(buffer) else {
                    if buffer.count > 16384 { throw TallyFollowError("an answer with no end of its header") }
                    continue
                }
                let status: (code: Int, line: String)
                do { status = try HTTPExchange.statusLine(Array(buffer[..<end])) } catch { throw TallyFollowError(error.reason) }
                try Self.checkStatus(HTTPExchange.Answer(status: status.code, statusLine: status.line, body: []))
                buffer.removeFirst(end + 4)
                headerDone = true
                // The events from here on are kept in the socket while the whole tally is read once.
                let tally = try currentTally()
                state.withLock { $0 = State(connected: true, program: tally.program, preview: tally.preview) }
                changed()
                connected()
            }
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                guard line.hasPrefix("data: "), let event = Self.tallyEvent(line.dropFirst(6)) else { continue }
                state.withLock { $0.program = event.program; $0.preview = event.preview }
                changed()
            }
            if buffer.count > 1 << 20 { throw TallyFollowError("an event line longer than 1 MiB") }
        }
    }

    /// `GET /api/v1/status`'s `program.tally`: every source on program or preview.
    private func currentTally() throws -> (program: Set<String>, preview: Set<String>) {
        let answer: HTTPExchange.Answer
        do {
            answer = try HTTPExchange.exchange("GET", "/api/v1/status", at: address, token: token, seconds: Self.connectSeconds,
                                               connectSeconds: Self.connectSeconds, isCancelled: { worker.isStopRequested })
        } catch { throw TallyFollowError("GET /api/v1/status: \(error.reason)") }
        try Self.checkStatus(answer)
        guard let json = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
              let tally = (json["program"] as? [String: Any])?["tally"] as? [String: String] else {
            throw TallyFollowError("GET /api/v1/status answered no program.tally")
        }
        return (Set(tally.filter { $0.value == "program" || $0.value == "both" }.keys),
                Set(tally.filter { $0.value == "preview" || $0.value == "both" }.keys))
    }

    /// A connected socket that has sent `GET path` (HTTP/1.0: the answer is the body to the close, never chunked).
    private func open(_ path: String) throws -> Int32 {
        do { return try HTTPExchange.open("GET", path, at: address, token: token, connectSeconds: Self.connectSeconds) } catch {
            throw TallyFollowError(error.reason)
        }
    }

    /// Throws the switcher's refusal (its status line: `401 Unauthorized` for a missing or wrong token).
    static func checkStatus(_ answer: HTTPExchange.Answer) throws {
        guard answer.status == 200 else {
            let hint = answer.status == 401 ? " (node.token must be the switcher's http.token)" : ""
            throw TallyFollowError("the switcher answered \(answer.statusLine)\(hint)")
        }
    }

    /// A `tally` event's lists, from one event-stream line's JSON (`{"event": {"kind": "tally", ...}}`).
    static func tallyEvent(_ json: Substring) -> (program: Set<String>, preview: Set<String>)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let event = object["event"] as? [String: Any], event["kind"] as? String == "tally" else { return nil }
        let details = event["details"] as? [String: Any] ?? [:]
        func names(_ key: String) -> Set<String> { Set((details[key] as? String ?? "").split(separator: ",").map(String.init)) }
        return (names("program"), names("preview"))
    }
}

struct TallyFollowError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
