#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A private tmpfs of a fixed size on a fresh directory: a disk a test can fill and free again. Needs
/// root (CAP_SYS_ADMIN) and a kernel that lets this process mount; `unavailableReason` says why not.
/// Unmounted (and its directory removed) by `unmount()`, which `deinit` calls too.
public final class ScratchTmpfs {
    public let directory: URL
    private var mounted = true

    /// Why a tmpfs cannot be mounted here (checked once by mounting a small one), or nil when it can.
    public static let unavailableReason: String? = {
        guard getuid() == 0 else { return "not root: mounting a tmpfs needs root" }
        do {
            let probe = try ScratchTmpfs(kibibytes: 64)
            probe.unmount()
            return nil
        } catch {
            return "\(error)"
        }
    }()

    /// Mounts a tmpfs of `kibibytes` on a new directory under the temporary directory.
    public init(kibibytes: Int) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tmpfs-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard Glibc.mount("tmpfs", directory.path, "tmpfs", 0, "size=\(kibibytes)k,mode=0700") == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: directory)
            mounted = false
            throw ScratchTmpfsError(description: "cannot mount a tmpfs on \(directory.path): \(reason)")
        }
    }

    deinit { unmount() }

    /// Unmounts (lazily, should a file still be open) and removes the directory. Safe to call twice.
    public func unmount() {
        guard mounted else { return }
        mounted = false
        _ = umount2(directory.path, Int32(MNT_DETACH))
        try? FileManager.default.removeItem(at: directory)
    }

    /// Fills the file system: writes `name` until the disk refuses more (ENOSPC). Returns its path.
    @discardableResult
    public func fill(name: String = "filler") throws -> URL {
        let url = directory.appendingPathComponent(name)
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ScratchTmpfsError(description: "cannot create \(url.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x5A, count: 16 * 1024)
        while true {
            let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == ENOSPC { return url }
                throw ScratchTmpfsError(description: "writing \(url.path): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Bytes still free (statvfs).
    public var freeBytes: Int64 {
        var info = statvfs()
        guard statvfs(directory.path, &info) == 0 else { return 0 }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }
}

public struct ScratchTmpfsError: Error, CustomStringConvertible {
    public let description: String
}
