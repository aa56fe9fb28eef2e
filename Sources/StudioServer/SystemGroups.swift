#if canImport(Glibc)
import Glibc
#endif

/// Group names to ids, through the reentrant libc lookup (the server has other threads running).
enum SystemGroups {
    /// The id of group `name`, or nil when there is no such group (or the lookup failed).
    static func id(ofGroup name: String) -> UInt32? {
        var size = 4096
        while size <= 1 << 20 {
            var entry = group()
            var result: UnsafeMutablePointer<group>?
            var buffer = [CChar](repeating: 0, count: size)
            let status = getgrnam_r(name, &entry, &buffer, size, &result)
            if status == ERANGE { size *= 4; continue }
            guard status == 0, result != nil else { return nil }
            return entry.gr_gid
        }
        return nil
    }
}
