#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StudioCore
import StudioSystem

/// The one HTTP client of studio's servers talking to each other (plain `http://`, HTTP/1.0: the
/// answer is the body up to the close, never chunked), over `TallySockets`' non-blocking sockets, the
/// token as `Authorization: Bearer`. A node following its switcher's tally (`SwitcherTallyClient`)
/// a switcher forwarding a camera command to its node (`NodeForwarding`), asking its history
/// (`NodeHistoryWatch`) and `studio collect` fetching its files (`NodeCollector`) all use it. Every wait is
/// bounded: a peer that is away, silent or slow costs at most the caller's `seconds`.
public enum HTTPExchange {
    /// An answer: its status code and line (`401 Unauthorized`) and its body.
    public struct Answer: Sendable {
        public var status: Int
        public var statusLine: String
        public var body: [UInt8]
    }

    /// Why an exchange failed, in words for the log or an error reply; `timedOut` when it ran out of time.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var timedOut = false
        public var description: String { reason }
        init(_ reason: String, timedOut: Bool = false) {
            self.reason = reason
            self.timedOut = timedOut
        }
    }

    /// A connected socket that has sent the request (connecting waits at most `connectSeconds`); the
    /// caller reads the answer and closes it.
    public static func open(_ method: String, _ path: String, at address: ListenAddress, token: String?, body: [UInt8]? = nil,
                            headers: [(String, String)] = [], connectSeconds: Double) throws(Failure) -> Int32 {
        let fd = try connect(to: address, seconds: connectSeconds)
        do { try send(method, path, on: fd, at: address, token: token, body: body, headers: headers, seconds: connectSeconds) } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// A connected socket, nothing sent yet (at most `seconds`): for a caller that times the exchange
    /// alone (`SwitcherClockClient`), without the connect. The caller closes it.
    public static func connect(to address: ListenAddress, seconds: Double) throws(Failure) -> Int32 {
        do { return try TallySockets.connect(to: address, seconds: seconds) } catch {
            throw Failure("cannot connect: \(error)", timedOut: error.errno == ETIMEDOUT)
        }
    }

    /// Writes the request on `fd` (at most `seconds` for the socket to take it).
    public static func send(_ method: String, _ path: String, on fd: Int32, at address: ListenAddress, token: String?,
                            body: [UInt8]? = nil, headers: [(String, String)] = [], seconds: Double) throws(Failure) {
        var request = "\(method) \(path) HTTP/1.0\r\nHost: \(address)\r\n" + (token.map { "Authorization: Bearer \($0)\r\n" } ?? "")
            + headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        if let body { request += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        var rest = Array((request + "\r\n").utf8)[...] + (body ?? [])[...]
        let deadline = MonotonicClock.now() + UInt64(seconds * 1e9)
        while !rest.isEmpty {
            do { rest = try TallySockets.write(rest, to: fd) } catch { throw Failure("cannot send the request: \(error)") }
            if rest.isEmpty { break }
            guard MonotonicClock.now() < deadline else { throw Failure("the request was not taken within \(formatted(seconds)) s", timedOut: true) }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&poller, 1, 50)
        }
    }

    /// One whole exchange: connects, sends, reads the answer; at most `seconds` in all (connecting at
    /// most `connectSeconds` of it), or sooner when `isCancelled` says so.
    public static func exchange(_ method: String, _ path: String, at address: ListenAddress, token: String?, body: [UInt8]? = nil,
                                seconds: Double, connectSeconds: Double, limit: Int = 1 << 20,
                                isCancelled: () -> Bool = { false }) throws(Failure) -> Answer {
        let deadline = MonotonicClock.now() + UInt64(seconds * 1e9)
        let fd = try open(method, path, at: address, token: token, body: body, connectSeconds: min(connectSeconds, seconds))
        defer { close(fd) }
        return try answer(on: fd, deadline: deadline, seconds: seconds, limit: limit, isCancelled: isCancelled)
    }

    /// The answer on `fd`, read until it is whole: its body as long as its `Content-Length` says, or to
    /// the close when it has none; by `deadline` (`seconds` after the start, for the words of the error).
    public static func answer(on fd: Int32, deadline: UInt64, seconds: Double, limit: Int = 1 << 20,
                              isCancelled: () -> Bool = { false }) throws(Failure) -> Answer {
        var bytes: [UInt8] = []
        while true {
            if let whole = try whole(bytes) { return whole }
            guard !isCancelled() else { throw Failure("stopped") }
            guard MonotonicClock.now() < deadline else { throw Failure("no answer within \(formatted(seconds)) s", timedOut: true) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 50)
            guard let read = TallySockets.read(from: fd, limit: 65536) else { break }
            bytes += read
            if bytes.count > limit { throw Failure("an answer over \(limit) bytes") }
        }
        // Closed: the answer is what came.
        guard let end = headerEnd(bytes) else {
            throw Failure(bytes.isEmpty ? "the connection closed without an answer" : "an answer with no end of its header")
        }
        let (status, line) = try statusLine(Array(bytes[..<end]))
        return Answer(status: status, statusLine: line, body: Array(bytes[(end + 4)...]))
    }

    /// The answer in `bytes` once its header and its `Content-Length` of body have come; nil before (and
    /// for an answer without a length, which ends at the close).
    static func whole(_ bytes: [UInt8]) throws(Failure) -> Answer? {
        guard let end = headerEnd(bytes) else { return nil }
        let header = String(decoding: bytes[..<end], as: UTF8.self)
        let length = header.split(separator: "\r\n").dropFirst().first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
        guard let length, bytes.count - (end + 4) >= length else { return nil }
        let (status, line) = try statusLine(Array(bytes[..<end]))
        return Answer(status: status, statusLine: line, body: Array(bytes[(end + 4)...].prefix(length)))
    }

    /// A download (`studio collect`): sends the request (`headers` added), reads the answer's header, then
    /// hands a `200`/`206` answer's body to `sink` as it arrives (the answer, then each piece; `sink`
    /// returns false to stop), to the close. Any other answer's body (up to 64 KiB) is in the returned
    /// answer, for its error. A peer silent for `idleSeconds` is a timeout; connecting takes at most `connectSeconds`.
    public static func download(_ path: String, at address: ListenAddress, token: String?, headers: [(String, String)] = [],
                                connectSeconds: Double, idleSeconds: Double, isCancelled: () -> Bool = { false },
                                into sink: (Answer, [UInt8]) -> Bool) throws(Failure) -> Answer {
        let fd = try open("GET", path, at: address, token: token, headers: headers, connectSeconds: connectSeconds)
        defer { close(fd) }
        var pending: [UInt8] = []
        var answer: Answer?
        var lastByte = MonotonicClock.now()
        while true {
            guard !isCancelled() else { throw Failure("stopped") }
            guard MonotonicClock.now() - lastByte < UInt64(idleSeconds * 1e9) else {
                throw Failure("nothing for \(formatted(idleSeconds)) s", timedOut: true)
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 50)
            guard let bytes = TallySockets.read(from: fd, limit: 256 * 1024) else { break }
            if bytes.isEmpty { continue }
            lastByte = MonotonicClock.now()
            if let answer {
                if (200...299).contains(answer.status) {
                    guard sink(answer, bytes) else { throw Failure("stopped") }
                } else if pending.count < 65536 {
                    pending += bytes
                }
                continue
            }
            pending += bytes
            guard let end = headerEnd(pending) else {
                if pending.count > 65536 { throw Failure("an answer with no end of its header") }
                continue
            }
            let (status, line) = try statusLine(Array(pending[..<end]))
            let started = Answer(status: status, statusLine: line, body: [])
            answer = started
            let rest = Array(pending[(end + 4)...])
            pending = []
            if (200...299).contains(status) {
                if !rest.isEmpty { guard sink(started, rest) else { throw Failure("stopped") } }
            } else {
                pending = rest
            }
        }
        guard var answer else {
            throw Failure(pending.isEmpty ? "the connection closed without an answer" : "an answer with no end of its header")
        }
        if !(200...299).contains(answer.status) { answer.body = pending }
        return answer
    }

    /// Where the header ends (its blank line's `\r\n\r\n`); nil while it has not.
    public static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first { bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10 }
    }

    /// The status code and its line after the version (`401 Unauthorized`).
    public static func statusLine(_ header: [UInt8]) throws(Failure) -> (Int, String) {
        let line = String(decoding: header.prefix { $0 != 13 }, as: UTF8.self)
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else { throw Failure("not an HTTP answer: \"\(line)\"") }
        return (status, parts.dropFirst().joined(separator: " "))
    }

    /// `40` for whole seconds, `0.8` otherwise: a limit as the errors say it.
    public static func formatted(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)"
    }
}
