import Foundation
import Synchronization
import CMicroHTTPD
import StudioSystem

extension HTTPConsole {
    /// What MHD's callbacks reach: the checks, the routes and the handler. Its methods run on MHD's
    /// connection threads.
    final class Core: Sendable {
        let settings: HTTPConsoleSettings
        let table: HTTPRouteTable
        let events: HTTPEventStream
        let budget: HTTPRequestBudget
        let connections: HTTPConnections
        let handler: HTTPHandler
        let access: HTTPAccessPolicy
        let throttled = Atomic<Int>(0)
        /// Requests waiting for their handler's answer, answered 503 when the console stops.
        private let waiting = Mutex<[ObjectIdentifier: ReplySlot]>([:])
        private let closed = Atomic<Bool>(false)

        init(settings: HTTPConsoleSettings, table: HTTPRouteTable, events: HTTPEventStream, budget: HTTPRequestBudget,
             connections: HTTPConnections, handler: @escaping HTTPHandler) {
            self.settings = settings
            self.table = table
            self.events = events
            self.budget = budget
            self.connections = connections
            self.handler = handler
            access = HTTPAccessPolicy(token: settings.token, isTLS: settings.tls != nil)
        }

        var isStopping: Bool { closed.load(ordering: .sequentiallyConsistent) }

        func stopping() {
            closed.store(true, ordering: .sequentiallyConsistent)
            let slots = waiting.withLock { Array($0.values) }
            for slot in slots { slot.fill(.error(503, code: "unavailable", "the server is stopping")) }
        }

        /// One MHD call for a request: the first (headers) checks it, the middle ones take the body, the
        /// last answers.
        func access(_ connection: OpaquePointer, url: String, method: String, data: UnsafePointer<CChar>?,
                    size: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
            guard let pointer = state.pointee else {
                let request = RequestState()
                state.pointee = Unmanaged.passRetained(request).toOpaque()
                if let refusal = check(connection, url: url, method: method, request: request) {
                    request.answered = true
                    return queue(refusal, on: connection, answering: true)
                }
                return .YES
            }
            let request = Unmanaged<RequestState>.fromOpaque(pointer).takeUnretainedValue()
            if size.pointee > 0 {
                // The body, as it arrives: copied, up to the limit; beyond it (or once refused), read and forgotten.
                if !request.tooLarge, !request.answered, let data {
                    if request.body.count + size.pointee > settings.maxBodyBytes {
                        request.tooLarge = true
                        request.body = []
                    } else {
                        data.withMemoryRebound(to: UInt8.self, capacity: size.pointee) {
                            request.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size.pointee))
                        }
                    }
                }
                size.pointee = 0
                return .YES
            }
            if request.answered { return .YES }
            request.answered = true
            // The request is whole: no deadline while it is answered (a cut may take a while).
            let tracked = Self.tracked(connection)
            if let tracked { connections.answering(tracked) }
            if request.tooLarge { return queue(tooLarge(), on: connection) }
            guard case .route(let route, let parameters) = request.match else { return .NO }
            if route == HTTPConsole.eventsRoute { return queue(eventStream(tracked), on: connection) }
            let call = HTTPCall(route: route, parameters: parameters, query: request.query, body: request.body, headers: request.headers)
            return queue(answer(call), on: connection)
        }

        /// What `HTTPConnections` holds for `connection` (MHD's socket context), nil when untracked.
        static func tracked(_ connection: OpaquePointer) -> HTTPConnections.Connection? {
            cmhd_connection_context(connection).map { Unmanaged<HTTPConnections.Connection>.fromOpaque($0).takeUnretainedValue() }
        }

        /// The checks made on the headers, in order; the answer when the request goes no further.
        private func check(_ connection: OpaquePointer, url: String, method: String, request: RequestState) -> HTTPResponse? {
            if !budget.take(clientAddress(connection)) {
                throttled.add(1, ordering: .relaxed)
                return .error(429, code: "too_many_requests", "too many requests from this address; slow down",
                              headers: [("Retry-After", "1")])
            }
            request.query = Self.values(connection, kind: .GET_ARGUMENT_KIND)
            for name in HTTPConsole.passedHeaders { request.headers[name.lowercased()] = header(connection, name) }
            let token = request.query.removeValue(forKey: "token")
            // HEAD is a GET whose body MHD leaves out (it sends the GET's headers, Content-Length included).
            let routeMethod = method == "HEAD" ? HTTPMethod.get.rawValue : method
            let match = table.match(method: routeMethod, path: url)
            var needsToken = true
            if case .route(let route, _) = match { needsToken = route.needsToken }
            if let refusal = access.refusal(method: routeMethod, authorization: header(connection, "Authorization"), queryToken: token,
                                            host: header(connection, "Host"), origin: header(connection, "Origin"), needsToken: needsToken) {
                switch refusal {
                case .unauthorized(let message):
                    return .error(401, code: "unauthorized", message, headers: [("WWW-Authenticate", "Bearer")])
                case .forbidden(let message): return .error(403, code: "forbidden", message)
                }
            }
            request.match = match
            switch match {
            case .notFound(let reason):
                return .error(404, code: "not_found", reason.map { "\(method) \(url): \($0)" } ?? "no route \(method) \(url) (see docs/http-api.md)")
            case .methodNotAllowed(let allowed):
                let list = (allowed.map(\.rawValue) + (allowed.contains(.get) ? ["HEAD"] : [])).joined(separator: ", ")
                return .error(405, code: "method_not_allowed", "\(url) takes \(list), not \(method)", headers: [("Allow", list)])
            case .route:
                if let length = header(connection, "Content-Length").flatMap(Int.init), length > settings.maxBodyBytes {
                    return tooLarge()
                }
                return nil
            }
        }

        private func tooLarge() -> HTTPResponse {
            .error(413, code: "too_large", "the request body is larger than \(settings.maxBodyBytes / 1024) KiB")
        }

        /// Hands `call` to the handler and waits, on this connection's thread, for its answer.
        private func answer(_ call: HTTPCall) -> HTTPResponse {
            let slot = ReplySlot()
            let key = ObjectIdentifier(slot)
            waiting.withLock { $0[key] = slot }
            defer { _ = waiting.withLock { $0.removeValue(forKey: key) } }
            if closed.load(ordering: .sequentiallyConsistent) { return .error(503, code: "unavailable", "the server is stopping") }
            handler(call) { slot.fill($0) }
            return slot.wait(seconds: settings.replyTimeoutSeconds)
                ?? .error(504, code: "timeout", "\(call.route.name) did not answer within \(Int(settings.replyTimeoutSeconds)) s")
        }

        /// `GET /api/v1/events`: its client's queue, read by this connection's thread. A client dropped for
        /// not reading has its socket shut down at once (its thread may be stuck waiting to write), and a
        /// small send buffer, so what it leaves unread is its queue rather than the kernel's buffers.
        private func eventStream(_ tracked: HTTPConnections.Connection?) -> HTTPResponse {
            if let tracked {
                guard connections.beginStream(tracked) else { return tooManyStreams() }
                var size = Self.eventStreamSendBuffer
                setsockopt(tracked.fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            let client = events.connect(dropped: { [connections] in if let tracked { connections.cut(tracked, .streamDropped) } })
            guard let client else { return .error(503, code: "unavailable", "the server is stopping") }
            return .streaming(contentType: "text/event-stream", headers: [("X-Accel-Buffering", "no")],
                              HTTPBodyStream(next: { client.next() }, finished: { [events] in events.remove(client) }))
        }

        /// The kernel's send buffer of an event stream's socket (it doubles it): room for a burst of events.
        static let eventStreamSendBuffer: Int32 = 16 * 1024

        private func tooManyStreams() -> HTTPResponse {
            .error(503, code: "unavailable", "too many streams are open (at most \(connections.limits.streams), \(connections.limits.streamsPerAddress) from one address); close one and retry",
                   headers: [("Retry-After", "5")])
        }

        /// Queues `answer`; `answering`: the request is answered before its body arrived (a refusal), so
        /// its deadline ends here. A stream needs a stream's slot (see `HTTPConnections`).
        private func queue(_ answer: HTTPResponse, on connection: OpaquePointer, answering: Bool = false) -> MHD_Result {
            var answer = answer
            let tracked = Self.tracked(connection)
            if answering, let tracked { connections.answering(tracked) }
            if let stream = answer.stream, let tracked, !connections.beginStream(tracked) {
                stream.finished()
                answer = tooManyStreams()
            }
            let response: OpaquePointer?
            if let stream = answer.stream {
                let box = Unmanaged.passRetained(BodyStreamBox(stream, console: self))
                response = MHD_create_response_from_callback(UInt64.max, 64 * 1024, bodyStreamReader, box.toOpaque(), bodyStreamFreed)
                if response == nil { box.takeRetainedValue().stream.finished() }
            } else {
                response = answer.body.withUnsafeBytes { bytes in
                    MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
                }
            }
            guard let response else { return .NO }
            MHD_add_response_header(response, "Content-Type", answer.contentType)
            if !answer.headers.contains(where: { $0.0.lowercased() == "cache-control" }) {
                MHD_add_response_header(response, "Cache-Control", "no-store")
            }
            for (name, value) in answer.headers { MHD_add_response_header(response, name, value) }
            let result = MHD_queue_response(connection, UInt32(answer.status), response)
            MHD_destroy_response(response)
            return result
        }

        private func header(_ connection: OpaquePointer, _ name: String) -> String? {
            MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
        }

        func clientAddress(_ connection: OpaquePointer) -> String {
            Self.addressText { cmhd_client_address(connection, $0, $1) }
        }

        /// An address as `fill` writes it (a `cmhd_` call: 0 when it did), "unknown" when it did not.
        static func addressText(_ fill: (UnsafeMutablePointer<CChar>, socklen_t) -> Int32) -> String {
            var buffer = [CChar](repeating: 0, count: 64)
            guard fill(&buffer, socklen_t(buffer.count)) == 0 else { return "unknown" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// Every value of `kind` (the query's items), copied out of MHD's iterator.
        static func values(_ connection: OpaquePointer, kind: MHD_ValueKind) -> [String: String] {
            final class Collected { var values: [String: String] = [:] }
            let collected = Collected()
            withExtendedLifetime(collected) {
                _ = MHD_get_connection_values(connection, kind, { context, _, key, value in
                    guard let context, let key else { return .YES }
                    let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
                    // MHD left `%2F` and `%25` escaped (`cmhd_unescape_keeping_slash`): decoded here.
                    func decoded(_ text: String) -> String { HTTPRouteTable.percentDecoded(text) ?? text }
                    collected.values[decoded(String(cString: key))] = value.map { decoded(String(cString: $0)) } ?? ""
                    return .YES
                }, Unmanaged.passUnretained(collected).toOpaque())
            }
            return collected.values
        }
    }
}

/// One request's answer, filled once from any thread, waited for by its connection's thread.
final class ReplySlot: @unchecked Sendable {
    // Invariant: `response` is read and written under `lock` only.
    private let lock = ConditionLock()
    private var response: HTTPResponse?

    func fill(_ answer: HTTPResponse) {
        lock.withLock {
            guard response == nil else { return }
            response = answer
            lock.broadcast()
        }
    }

    func wait(seconds: Double) -> HTTPResponse? {
        let deadline = MonotonicClock.now() + UInt64(seconds * 1e9)
        return lock.withLock {
            while response == nil { if !lock.wait(untilMonotonic: deadline) { break } }
            return response
        }
    }
}

/// What a streamed response's MHD callbacks read from: the stream, the bytes it gave that are not
/// sent yet, and the console (a stopping console ends every stream).
final class BodyStreamBox: @unchecked Sendable {
    // Invariant: `pending` is touched only by the connection's thread (MHD calls one response's content
    // reader from one thread at a time); `finished` runs once, from the free callback.
    let stream: HTTPBodyStream
    let console: HTTPConsole.Core
    var pending: ArraySlice<UInt8> = []

    init(_ stream: HTTPBodyStream, console: HTTPConsole.Core) {
        self.stream = stream
        self.console = console
    }

    /// Copies the next bytes into `buffer`, asking the stream for more when none are pending; nil ends.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        while pending.isEmpty {
            if console.isStopping { return nil }
            guard let next = stream.next() else { return nil }
            pending = next[...]
        }
        let count = min(buffer.count, pending.count)
        buffer.copyBytes(from: pending.prefix(count))
        pending = pending.dropFirst(count)
        return count
    }
}

/// MHD's content reader for a streamed response; -2 (MHD_CONTENT_READER_END_WITH_ERROR) ends it.
private let bodyStreamReader: MHD_ContentReaderCallback = { context, _, buffer, size in
    guard let context, let buffer else { return -2 }
    let box = Unmanaged<BodyStreamBox>.fromOpaque(context).takeUnretainedValue()
    return box.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: size)) ?? -2
}

private let bodyStreamFreed: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    Unmanaged<BodyStreamBox>.fromOpaque(context).takeRetainedValue().stream.finished()
}
