import Foundation
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// How the configured path stopped naming the database file the store has open.
struct DatabaseFileChange: Sendable, Equatable {
    enum Kind: String, Sendable { case deleted, moved, replaced }
    /// `deleted`: nothing is at the path and the file is gone; `moved`: nothing is at the path and the file
    /// has another name; `replaced`: another file is at the path.
    let kind: Kind
    /// Where the file the store had open is now, when it still has a name (`mv studio.db old.db`); nil when
    /// it was unlinked (its link count is 0) or the name cannot be read.
    let oldFileNowAt: String?
    /// Whether the old file still has a link (a name), found or not.
    let oldFileLinked: Bool

    /// What `database_replaced` says in `old_file`: the name, `deleted`, or `another link` (one not found in
    /// the database's directory).
    var oldFileDetail: String { oldFileNowAt ?? (oldFileLinked ? "another link" : "deleted") }

    /// For the log and the `database_replaced` event, in the operator's words.
    var description: String {
        switch kind {
        case .deleted: return "the database file was deleted (its link count is 0)"
        case .moved: return "the database file was moved to \(oldFileNowAt ?? "another name")"
        case .replaced:
            let old = oldFileNowAt.map { "is now \($0)" }
                ?? (oldFileLinked ? "still has another name" : "was deleted (its link count is 0)")
            return "another file was put at the database's path; the file the store had open \(old)"
        }
    }
}

/// The identity (device and inode) of the database file the store opened, to notice when its path stops
/// naming it: someone deleted it, renamed it, or moved another file over it. Checking costs a `stat` of the
/// path, an `fstat` of the store's own descriptor and SQLite's own check (SQLITE_FCNTL_HAS_MOVED); the store
/// does it before each write and on its heartbeat.
///
/// The watch holds its own read-only descriptor of the file (for its link count and for the name it has
/// now). Closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's
/// included: `close()` must only be called after the SQLite connection to the file is closed.
final class DatabaseFileWatch {
    let path: String
    private var descriptor: Int32
    private let device: UInt64
    private let inode: UInt64

    /// Opens the file at `path` (just opened by the store's connection) and takes its identity.
    init(path: String) throws(SystemError) {
        self.path = path
        descriptor = try syscall("open") { open(path, O_RDONLY | O_CLOEXEC) }
        var info = stat()
        do {
            try syscall("fstat") { [descriptor] in fstat(descriptor, &info) }
        } catch {
            _ = try? syscall("close") { [descriptor] in Glibc.close(descriptor) }
            throw error
        }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    deinit { close() }

    func close() {
        guard descriptor >= 0 else { return }
        _ = try? syscall("close") { [descriptor] in Glibc.close(descriptor) }
        descriptor = -1
    }

    /// nil while the path still names the file the store has open (or it cannot be told: a `stat` failing
    /// for another reason than ENOENT is left to the writes, which say what is wrong).
    func change(connectionSaysMoved: Bool) -> DatabaseFileChange? {
        var open = stat()
        let linkCount = (try? syscall("fstat") { [descriptor] in fstat(descriptor, &open) }) != nil ? Int(open.st_nlink) : 1
        var atPath = stat()
        let pathIsEmpty: Bool
        do {
            try syscall("stat") { stat(path, &atPath) }
            let same = UInt64(atPath.st_dev) == device && UInt64(atPath.st_ino) == inode
            if same && linkCount > 0 && !connectionSaysMoved { return nil }
            pathIsEmpty = false
        } catch {
            guard error.errno == ENOENT else { return nil }
            pathIsEmpty = true
        }
        let oldName = linkCount > 0 ? currentName() : nil
        let kind: DatabaseFileChange.Kind = pathIsEmpty ? (linkCount == 0 ? .deleted : .moved) : .replaced
        return DatabaseFileChange(kind: kind, oldFileNowAt: oldName, oldFileLinked: linkCount > 0)
    }

    /// The name the open file has now: from /proc/self/fd when it was renamed; when the name it was opened
    /// by is gone but it has another link, an entry of the database's directory with its device and inode.
    /// nil if it has none (or none can be found).
    private func currentName() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let link = "/proc/self/fd/\(descriptor)"
        let count = buffer.count - 1
        guard let length = try? syscall("readlink", { readlink(link, &buffer, count) }) else { return nil }
        let name = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard name.hasSuffix(" (deleted)") else { return name }
        let directory = (path as NSString).deletingLastPathComponent
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        return entries.sorted().lazy.map { (directory as NSString).appendingPathComponent($0) }.first { candidate in
            var info = stat()
            return (try? syscall("lstat") { lstat(candidate, &info) }) != nil
                && UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
        }
    }
}
