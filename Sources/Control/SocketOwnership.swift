import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// Whether the client may trust the control socket at a path before it connects: another local user
/// who owns the socket or its directory could answer in the server's place (a planted
/// `/tmp/studio-UID/`) and read the operator's commands.
///
/// The rule: the socket's directory and the socket belong to the client's own uid or to root. A socket
/// that a server running as another user opened to a group (`--socket-group`) is trusted when both
/// the directory and the socket are in one of the client's groups and grant that group access
/// (directory g+x, socket g+w) — except under the client's private default directory
/// (`/tmp/studio-UID`), which no shared server ever uses. A directory that others may write (without
/// the sticky bit) is never trusted: anyone could replace the socket in it.
public enum SocketOwnership {
    /// What `lstat` says about one file.
    public struct FileOwner: Sendable, Equatable {
        public var uid: UInt32
        public var gid: UInt32
        public var mode: UInt32
        public init(uid: UInt32, gid: UInt32, mode: UInt32) {
            self.uid = uid
            self.gid = gid
            self.mode = mode
        }
    }

    /// Who is asking.
    public struct Caller: Sendable {
        public var uid: UInt32
        /// The effective group and the supplementary groups.
        public var groups: Set<UInt32>
        public init(uid: UInt32, groups: Set<UInt32>) {
            self.uid = uid
            self.groups = groups
        }

        /// This process (effective uid, effective and supplementary groups).
        public static var current: Caller {
            var groups: Set<UInt32> = [getegid()]
            let count = getgroups(0, nil)
            if count > 0 {
                var list = [gid_t](repeating: 0, count: Int(count))
                let read = getgroups(count, &list)
                if read > 0 { groups.formUnion(list.prefix(Int(read))) }
            }
            return Caller(uid: geteuid(), groups: groups)
        }
    }

    /// The decision: nil when trusted, else why not (in the operator's words).
    public static func refusal(directory: String, _ directoryOwner: FileOwner, socket: String, _ socketOwner: FileOwner?,
                               caller: Caller, groupAllowed: Bool) -> String? {
        if directoryOwner.mode & 0o002 != 0 && directoryOwner.mode & 0o1000 == 0 {
            return "\(directory) is writable by every user (mode \(octal(directoryOwner.mode & 0o7777))), so anyone could replace the control socket in it; refusing to connect"
        }
        if let problem = foreign(directory, directoryOwner, access: 0o010, caller: caller, groupAllowed: groupAllowed) {
            return problem + " (someone else may have created it to pose as the studio server; remove it, or use another --socket path)"
        }
        if let socketOwner,
           let problem = foreign(socket, socketOwner, access: 0o020, caller: caller, groupAllowed: groupAllowed) {
            return problem + " (it may be a fake server; use another --socket path)"
        }
        return nil
    }

    /// Why `owner` is not trusted, or nil when it is.
    private static func foreign(_ path: String, _ owner: FileOwner, access: UInt32, caller: Caller,
                                groupAllowed: Bool) -> String? {
        if owner.uid == caller.uid || owner.uid == 0 { return nil }
        if groupAllowed, caller.groups.contains(owner.gid), owner.mode & access != 0 { return nil }
        var text = "\(path) belongs to \(userName(owner.uid)), not to you (\(userName(caller.uid))) or root"
        if groupAllowed {
            text += ", and is not opened to a group of yours (group \(groupName(owner.gid)))"
        }
        return text + ";"
    }

    /// Checks the socket at `path` for this process. Nil when trusted or when there is nothing there
    /// yet (then connecting fails with "no server" anyway).
    public static func check(socketPath path: String, caller: Caller = .current) -> String? {
        let directory = parentDirectory(of: path)
        // The directory as connect() resolves it (`/var/run` is a link to `/run`); the socket itself
        // not followed: a link there is the link's owner's doing.
        guard let directoryOwner = owner(of: directory, followingLinks: true) else { return nil }
        let socketOwner = owner(of: path, followingLinks: false)
        let privateDefault = directory == "/tmp/studio-\(caller.uid)"
        return refusal(directory: directory, directoryOwner, socket: path, socketOwner, caller: caller,
                       groupAllowed: !privateDefault)
    }

    static func parentDirectory(of path: String) -> String {
        let components = path.split(separator: "/", omittingEmptySubsequences: true).dropLast()
        return components.isEmpty ? "/" : "/" + components.joined(separator: "/")
    }

    /// `stat` (or `lstat`) of `path`; nil when it cannot be read (missing).
    static func owner(of path: String, followingLinks: Bool) -> FileOwner? {
        var info = stat()
        let read = followingLinks ? (try? syscall("stat", { stat(path, &info) })) : (try? syscall("lstat", { lstat(path, &info) }))
        guard read != nil else { return nil }
        return FileOwner(uid: info.st_uid, gid: info.st_gid, mode: UInt32(info.st_mode))
    }

    /// "user alice (uid 1000)", or "uid 1000" when the name is unknown.
    public static func userName(_ uid: UInt32) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "user \(String(cString: name)) (uid \(uid))"
    }

    /// "studio (gid 998)", or "gid 998".
    public static func groupName(_ gid: UInt32) -> String {
        guard let entry = getgrgid(gid), let name = entry.pointee.gr_name else { return "gid \(gid)" }
        return "\(String(cString: name)) (gid \(gid))"
    }

    static func octal(_ mode: UInt32) -> String { "0" + String(mode, radix: 8) }
}
