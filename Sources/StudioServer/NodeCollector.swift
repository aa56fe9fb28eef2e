#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StudioCore
import StudioSystem
import Control
import MediaSupport
import TallyOut

/// `studio collect`'s copying of one node file to the switcher's machine over the node's HTTP API
/// (`RecordingFileRoutes` there, its `api` and `token`): the node's SHA-256 and size first, then the
/// bytes the copy lacks (`Range` from the copy's size: a partial copy continues), then the copy hashed
/// here; a mismatch is fetched again once, whole, then reported. Runs on the caller's thread (the CLI's).
public struct NodeCollector: Sendable {
    /// The node's answer for its hash may take a while for a big file (it hashes as it answers).
    static let digestSeconds = 600.0
    /// A download that receives nothing this long has failed.
    static let idleSeconds = 15.0

    public let node: SRTListenerSpec.Node
    let api: NodeAPI

    /// What one file came to.
    public struct Outcome: Sendable, Equatable {
        public var bytes: Int64
        /// The copy's size before (0: a fresh copy; `bytes`: it was whole already).
        public var resumedFrom: Int64
        public var sha256: String
        /// Fetched again whole after a mismatch.
        public var refetched: Bool
    }

    /// A collector for `node`; `invalid_argument` naming the keys when its `api` is not known.
    public init(node: SRTListenerSpec.Node) throws(ControlError) {
        guard let address = node.api else {
            throw ControlError(.invalidArgument, "node \(node.name)'s HTTP API is not known: give the switcher's config (--config) whose "
                               + "network.srt.nodes entry for \(node.name) has api and token")
        }
        self.node = node
        api = NodeAPI(node: node, address: address)
    }

    /// The node's file `name` of its session `nodeSession` into `destination` (kept or continued when it
    /// is there); `progress` sees the bytes the copy has and the file's size.
    public func collect(_ name: String, session nodeSession: Int64, into destination: String,
                        progress: (Int64, Int64) -> Void = { _, _ in }) throws(ControlError) -> Outcome {
        var segment = CharacterSet.urlPathAllowed
        segment.remove("/")
        let route = "/api/v1/sessions/\(nodeSession)/recordings/\(name.addingPercentEncoding(withAllowedCharacters: segment) ?? name)"
        let remote = try api.get(route + "/sha256", seconds: Self.digestSeconds)
        if let error = remote["error"], let message = error["message"]?.stringValue { throw ControlError(.internal, "node \(node.name): \(message)") }
        guard let total = remote["bytes"]?.intValue.map(Int64.init), let sha256 = remote["sha256"]?.stringValue else {
            throw ControlError(.internal, "\(api.described) answered \(name)'s checksum without its size and SHA-256: \(remote)")
        }
        var resumedFrom: Int64 = 0
        for attempt in 0..<2 {
            var had = Self.size(of: destination)
            if had > total || attempt > 0 {
                unlink(destination)
                had = 0
            }
            if attempt == 0 { resumedFrom = had }
            progress(had, total)
            if had < total { try fetch(route, from: had, through: total, into: destination, progress: progress) }
            let local: FileDigest
            do { local = try FileDigest.sha256(of: destination) } catch {
                throw ControlError(.internal, "cannot check the copy \(destination): \(error)")
            }
            if local.sha256 == sha256 && local.bytes == total {
                return Outcome(bytes: total, resumedFrom: resumedFrom, sha256: sha256, refetched: attempt > 0)
            }
            if attempt > 0 {
                throw ControlError(.internal, "the copy \(destination) does not match node \(node.name)'s \(name) even fetched again whole "
                                   + "(sha256 \(local.sha256), \(local.bytes) bytes; the node's: \(sha256), \(total) bytes): is the file still being written there?")
            }
        }
        throw ControlError(.internal, "unreachable")
    }

    /// Appends the node's bytes `from..<through` of `route` to `destination`.
    private func fetch(_ route: String, from start: Int64, through end: Int64, into destination: String,
                       progress: (Int64, Int64) -> Void) throws(ControlError) {
        let fd: Int32
        do { fd = try syscall("open") { open(destination, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644) } }
        catch { throw ControlError(.internal, "cannot write \(destination): \(error)") }
        defer { close(fd) }
        var written = start
        var failure: String?
        let answer: HTTPExchange.Answer
        do {
            answer = try HTTPExchange.download(route, at: api.address, token: node.token, headers: [("Range", "bytes=\(start)-\(end - 1)")],
                                               connectSeconds: NodeForwarding.connectSeconds, idleSeconds: Self.idleSeconds) { answer, bytes in
                if answer.status == 200 && written == start && start > 0 {
                    // The whole file came instead of the range: the copy starts again.
                    ftruncate(fd, 0)
                    written = 0
                }
                do { try Self.writeAll(bytes, to: fd) } catch {
                    failure = "cannot write \(destination): \(error)"
                    return false
                }
                written += Int64(bytes.count)
                progress(written, end)
                return true
            }
        } catch {
            if let failure { throw ControlError(.internal, failure) }
            if error.timedOut { throw ControlError(.timeout, "\(api.described) stopped sending \(route) (\(error.reason)); run collect again to continue") }
            throw ControlError(.unavailable, "\(api.described) is unreachable (\(error.reason)): is the node's `studio serve` running with --http there?")
        }
        try api.check(status: answer.status, line: answer.statusLine, body: answer.body)
        guard written == end else {
            throw ControlError(.unavailable, "\(api.described) ended \(route) after \(written) of \(end) bytes; run collect again to continue")
        }
    }

    /// Writes all of `bytes` (a write may take only part of them: the rest follows).
    static func writeAll(_ bytes: [UInt8], to fd: Int32) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                Result { () throws(SystemError) in try syscall("write") { Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done) } }
            }
            done += try result.get()
        }
    }

    static func size(of path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
