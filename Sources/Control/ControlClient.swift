import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// A blocking client of the control socket, for the `studio` CLI commands (`switch`, `status`,
/// `watch`...). Use it from one thread at a time.
public final class ControlClient {
    public let socketPath: String
    private var fd: Int32
    private var input: [UInt8] = []
    private var inputStart = 0
    private var nextID = 1
    /// Events that arrived while waiting for a reply, delivered by `subscribe`.
    private var pendingEvents: [JSONValue] = []
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    /// Replies can be large (a session's log); this only stops a runaway peer.
    private static let maxMessageBytes = 64 * 1024 * 1024

    /// Connects to the server. Throws `no_server` naming the path when nobody listens there, and
    /// `untrusted_socket`, without connecting, when the socket or its directory belongs to another
    /// user (see `SocketOwnership`).
    public init(socketPath: String, caller: SocketOwnership.Caller = .current) throws(ControlError) {
        self.socketPath = socketPath
        if let refusal = SocketOwnership.check(socketPath: socketPath, caller: caller) {
            throw ControlError(.untrustedSocket, "not connecting to \(socketPath): \(refusal)")
        }
        guard let address = UnixSocket.address(for: socketPath) else {
            throw ControlError(.connectionFailed,
                               "cannot use \(socketPath) as a control socket path (empty, or longer than \(UnixSocket.maxPathLength) bytes)")
        }
        let descriptor: Int32
        do {
            descriptor = try UnixSocket.makeStreamSocket()
        } catch {
            throw ControlError(.connectionFailed, "cannot create a socket: \(error)")
        }
        do {
            try UnixSocket.connect(descriptor, to: address)
            try UnixSocket.setNonBlocking(descriptor)
        } catch {
            UnixSocket.close(descriptor)
            throw Self.connectError(error, path: socketPath)
        }
        fd = descriptor
    }

    deinit { close() }

    public func close() {
        UnixSocket.close(fd)
        fd = -1
    }

    static func connectError(_ error: SystemError, path: String) -> ControlError {
        switch error.errno {
        case ENOENT, ECONNREFUSED:
            return ControlError(.noServer, "no studio server is listening on \(path) (is `studio serve` running?)")
        case EACCES, EPERM:
            return ControlError(.connectionFailed,
                                "permission denied connecting to \(path) (the socket is owner-only, or its group is not yours: run as the user of `studio serve`, or join the group of its --socket-group)")
        default:
            return ControlError(.connectionFailed, "cannot connect to \(path): \(error)")
        }
    }

    /// Sends one command and waits for its reply. Returns the `result`; throws a `ControlError`
    /// with the server's code and message for an error reply, `timeout` when no reply comes in time,
    /// and `connection_closed` when the server goes away.
    @discardableResult
    public func request(_ command: String, arguments: [String: JSONValue] = [:],
                        timeoutSeconds: Double = 10) throws(ControlError) -> JSONValue {
        let id = nextID
        nextID += 1
        let deadline = MonotonicClock.now() + UInt64(max(0, timeoutSeconds) * 1e9)
        let request = ControlRequest(id: .int(id), command: command, arguments: arguments)
        do {
            try send(Array((request.line + "\n").utf8), deadline: deadline)
        } catch {
            // The server may have said why before closing (`busy`): report that rather than EPIPE.
            if let message = try? receiveMessage(deadline: MonotonicClock.now()), message["ok"]?.boolValue == false {
                return try Self.result(of: message)
            }
            throw error
        }
        while true {
            let message = try receiveMessage(deadline: deadline)
            if let event = message["event"], message["id"] == nil {
                pendingEvents.append(event)
                continue
            }
            if message["id"] == .int(id) { return try Self.result(of: message) }
            // An error not tied to a request id (`busy`, `too_large`) concerns this request too.
            if message["id"] == .null, message["ok"]?.boolValue == false { return try Self.result(of: message) }
            // Otherwise: a late reply to an earlier request that timed out.
        }
    }

    /// Subscribes to server events and calls `onEvent` with each, until it returns false (then this
    /// returns) or the server closes the connection (then this throws `connection_closed`).
    /// `timeoutSeconds` bounds the wait for the subscription's confirmation; `eventTimeoutSeconds`,
    /// when given, the wait for each event (then this throws `timeout`).
    public func subscribe(timeoutSeconds: Double = 10, eventTimeoutSeconds: Double? = nil,
                          onEvent: (JSONValue) -> Bool) throws(ControlError) {
        try request("subscribe", timeoutSeconds: timeoutSeconds)
        while true {
            let event: JSONValue
            if !pendingEvents.isEmpty {
                event = pendingEvents.removeFirst()
            } else {
                let deadline = eventTimeoutSeconds.map { MonotonicClock.now() + UInt64(max(0, $0) * 1e9) }
                let message = try receiveMessage(deadline: deadline)
                guard let carried = message["event"] else { continue }
                event = carried
            }
            if !onEvent(event) { return }
        }
    }

    static func result(of message: JSONValue) throws(ControlError) -> JSONValue {
        if message["ok"]?.boolValue == true { return message["result"] ?? .null }
        guard let error = message["error"], let code = error["code"]?.stringValue else {
            throw ControlError(.connectionFailed, "the server sent a reply without \"ok\" or \"error\": \(message.jsonText.prefix(200))")
        }
        throw ControlError(ControlErrorCode(rawValue: code), error["message"]?.stringValue ?? code)
    }

    // MARK: Wire

    /// Writes raw bytes (tests use this to send malformed input).
    func send(_ bytes: [UInt8], deadline: UInt64?) throws(ControlError) {
        var offset = 0
        while offset < bytes.count {
            let written: Int
            do {
                written = try UnixSocket.sendSome(fd, bytes, from: offset)
            } catch {
                throw ControlError(.connectionClosed, "lost the connection to \(socketPath): \(error)")
            }
            if written == 0 { try wait(for: Int16(POLLOUT), deadline: deadline) }
            offset += written
        }
    }

    /// Reads the next line and parses it as JSON.
    func receiveMessage(deadline: UInt64?) throws(ControlError) -> JSONValue {
        let line = try receiveLine(deadline: deadline)
        do {
            return try JSONValue(parsing: line)
        } catch {
            throw ControlError(.connectionFailed, "the server sent \(error)")
        }
    }

    func receiveLine(deadline: UInt64?) throws(ControlError) -> ArraySlice<UInt8> {
        while true {
            if let newline = input[inputStart...].firstIndex(of: 0x0A) {
                let line = input[inputStart..<newline]
                inputStart = newline + 1
                if inputStart == input.count {
                    defer { input.removeAll(keepingCapacity: true); inputStart = 0 }
                    return ArraySlice(Array(line))
                }
                return line
            }
            if inputStart > 0 {
                input.removeFirst(inputStart)
                inputStart = 0
            }
            guard input.count <= Self.maxMessageBytes else {
                throw ControlError(.connectionFailed, "the server sent a message over \(Self.maxMessageBytes) bytes")
            }
            try wait(for: Int16(POLLIN), deadline: deadline)
            let count: Int
            do {
                guard let read = try UnixSocket.readSome(fd, into: &chunk) else { continue }
                count = read
            } catch {
                throw ControlError(.connectionClosed, "lost the connection to \(socketPath): \(error)")
            }
            if count == 0 {
                throw ControlError(.connectionClosed, "the studio server at \(socketPath) closed the connection")
            }
            input.append(contentsOf: chunk[0..<count])
        }
    }

    /// Waits until the socket is ready for `events`. Past the deadline it still checks once without
    /// waiting, so data already there is never reported as a timeout.
    private func wait(for events: Int16, deadline: UInt64?) throws(ControlError) {
        while true {
            var timeout: Int32 = -1
            var expired = false
            if let deadline {
                let now = MonotonicClock.now()
                if now >= deadline {
                    timeout = 0
                    expired = true
                } else {
                    timeout = Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
                }
            }
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let ready: Int32
            do {
                ready = try syscall("poll") { poll(&descriptor, 1, timeout) }
            } catch {
                throw ControlError(.connectionFailed, "waiting for \(socketPath): \(error)")
            }
            if ready > 0 { return }
            if expired { throw ControlError(.timeout, "no reply from the studio server at \(socketPath) in time") }
        }
    }
}
