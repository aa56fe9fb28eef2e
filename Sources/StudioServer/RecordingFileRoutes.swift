#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Control
import EventStore
import HTTPConsole
import MediaSupport
import StudioSystem

/// A session's recording files over the HTTP API, for a switcher's `studio collect` (docs/nodes.md, "One
/// history for the editor"): `GET /api/v1/sessions/{session}/recordings/{file}` sends the file (`Range:
/// bytes=N-` or `N-M` for the rest of a partial copy: `206` with `Content-Range`), and `.../{file}/sha256`
/// its SHA-256 and size (`FileDigest`). `file` is a file name that this server's history lists for that
/// session (`recordings`), matched against the names only: nothing else on the disk can be asked for. The
/// token is asked for as on every route. Answered on the connection's own thread, a slice at a time
/// (a stream), so neither a big file nor its hash holds anything else.
struct RecordingFileRoutes: Sendable {
    static let file = HTTPRoute(.get, "/api/v1/sessions/{session:int}/recordings/{file}", name: "recording_file")
    static let digest = HTTPRoute(.get, "/api/v1/sessions/{session:int}/recordings/{file}/sha256", name: "recording_sha256")
    static let all = [file, digest]
    /// What one call of a file's stream sends, and how much of a file one call of the hash's stream reads.
    static let sliceBytes = 256 * 1024
    static let hashSliceBytes = 32 << 20

    let store: EventStore

    /// The answer when `call` is one of these routes; nil otherwise.
    func answer(_ call: HTTPCall) -> HTTPResponse? {
        guard call.route == Self.file || call.route == Self.digest else { return nil }
        guard case .integer(let session) = call.parameters["session"], case .text(let name) = call.parameters["file"] else {
            return .error(400, code: ControlErrorCode.invalidArgument.rawValue, "expected a session id and a file name")
        }
        let path: String
        do {
            let listed = try store.recordings(sessionID: session).map(\.path)
            guard let found = listed.first(where: { ($0 as NSString).lastPathComponent == name }) else {
                return .error(404, code: ControlErrorCode.notFound.rawValue,
                              "session \(session) has no recording named \(name) (see GET /api/v1/sessions/\(session)/recordings)")
            }
            path = found
        } catch {
            return .error(500, code: ControlErrorCode.internal.rawValue, "cannot read session \(session)'s recordings: \(error)")
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            return .error(404, code: ControlErrorCode.notFound.rawValue, "\(name) of session \(session) is gone from this machine's disk (\(path))")
        }
        let size = Int64(info.st_size)
        if call.route == Self.digest { return .streaming(contentType: "application/json", Self.digestStream(path: path, name: name)) }
        var start: Int64 = 0
        var end = size - 1
        var status = 200
        var headers = [("Accept-Ranges", "bytes"), ("X-Studio-File-Size", String(size))]
        if let range = call.headers["range"] {
            guard let (first, last) = Self.range(range, size: size) else {
                return .error(416, code: ControlErrorCode.invalidArgument.rawValue,
                              "\(name) has \(size) bytes: the range \(range) is outside it", headers: [("Content-Range", "bytes */\(size)")])
            }
            (start, end, status) = (first, last, 206)
            headers.append(("Content-Range", "bytes \(first)-\(last)/\(size)"))
        }
        var response = HTTPResponse.streaming(contentType: "application/octet-stream", headers: headers, Self.fileStream(path: path, from: start, through: end))
        response.status = status
        return response
    }

    /// `bytes=N-` or `bytes=N-M` inside a file of `size` bytes (`M` past its end is its end); nil for
    /// anything else (several ranges, a suffix range, a start past the end).
    static func range(_ text: String, size: Int64) -> (Int64, Int64)? {
        guard text.hasPrefix("bytes=") else { return nil }
        let parts = text.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int64(parts[0]), first >= 0, first < size else { return nil }
        if parts[1].isEmpty { return (first, size - 1) }
        guard let last = Int64(parts[1]), last >= first else { return nil }
        return (first, min(last, size - 1))
    }

    /// The file's bytes `start...end`, a slice per call, read where it is asked (the file is opened
    /// at the first call: a stream never sent is never called).
    private static func fileStream(path: String, from start: Int64, through end: Int64) -> HTTPBodyStream {
        let reader = FileSlices(path: path, from: start, through: end)
        return HTTPBodyStream(next: { reader.next() }, finished: { reader.close() })
    }

    /// `{"file", "bytes", "sha256"}` once the file is hashed, a slice per call (`[]` meanwhile).
    private static func digestStream(path: String, name: String) -> HTTPBodyStream {
        let job = DigestJob(path: path, name: name)
        return HTTPBodyStream(next: { job.next() }, finished: {})
    }
}

/// A file read a slice at a time for one response. `@unchecked Sendable`: the console calls a stream's
/// `next` and `finished` from that connection's thread only, one at a time, and `state` is under a mutex anyway.
private final class FileSlices: @unchecked Sendable {
    private struct State { var fd: Int32 = -1; var position: Int64; var opened = false }
    private let path: String
    private let end: Int64
    private let state: Mutex<State>

    init(path: String, from start: Int64, through end: Int64) {
        self.path = path
        self.end = end
        state = Mutex(State(position: start))
    }

    func next() -> [UInt8]? {
        state.withLock { state -> [UInt8]? in
            if !state.opened {
                state.opened = true
                state.fd = (try? syscall("open") { open(path, O_RDONLY | O_CLOEXEC) }) ?? -1
            }
            guard state.fd >= 0, state.position <= end else { return nil }
            let want = Int(min(Int64(RecordingFileRoutes.sliceBytes), end - state.position + 1))
            var bytes = [UInt8](repeating: 0, count: want)
            let read = bytes.withUnsafeMutableBytes { buffer in
                try? syscall("pread") { pread(state.fd, buffer.baseAddress, want, off_t(state.position)) }
            }
            guard let count = read, count > 0 else { return nil }
            state.position += Int64(count)
            return Array(bytes.prefix(count))
        }
    }

    func close() {
        state.withLock { state in
            if state.fd >= 0 { Glibc.close(state.fd) }
            state.fd = -1
        }
    }
}

/// A file's hash made a slice per call of its stream. `@unchecked Sendable` as `FileSlices`: one
/// connection's thread calls it, one call at a time; `state` is under a mutex anyway.
private final class DigestJob: @unchecked Sendable {
    private enum State { case waiting, hashing(FileDigest.Hasher), sent }
    private let path: String
    private let name: String
    private let state = Mutex<State>(.waiting)

    init(path: String, name: String) {
        self.path = path
        self.name = name
    }

    func next() -> [UInt8]? {
        state.withLock { state -> [UInt8]? in
            do {
                switch state {
                case .sent: return nil
                case .waiting:
                    state = .hashing(try FileDigest.Hasher(path: path))
                    return []
                case .hashing(let hasher):
                    guard let digest = try hasher.step(bytes: RecordingFileRoutes.hashSliceBytes) else { return [] }
                    state = .sent
                    return Self.json(["file": .string(name), "bytes": .number(Double(digest.bytes)), "sha256": .string(digest.sha256)])
                }
            } catch {
                state = .sent
                return Self.json(["error": .object(["code": .string(ControlErrorCode.internal.rawValue), "message": .string("\(error)")])])
            }
        }
    }

    private static func json(_ object: [String: JSONValue]) -> [UInt8] {
        Array((JSONValue.object(object).jsonText + "\n").utf8)
    }
}
