#if canImport(Glibc)
import Glibc
#endif

/// An errno from a named system call.
public struct SystemError: Error, Equatable, CustomStringConvertible {
    public let call: String
    public let errno: Int32
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }
    public var description: String { "\(call): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// Every system call goes through here: it retries on EINTR and throws the errno with the call's name.
/// `body` returns the call's result; a value equal to `failure` means "look at errno".
@discardableResult
@inline(__always)
public func syscall<T: Equatable>(_ name: String, failure: T, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != failure { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(call: name, errno: code)
    }
}

/// The usual case: calls that return -1 on failure.
@discardableResult
@inline(__always)
public func syscall<T: BinaryInteger>(_ name: String, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(call: name, errno: code)
    }
}

public enum Signals {
    /// A closed RTMP or control connection must surface as EPIPE from write, not kill the process.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}

/// The one `mkdir -p`: creates `path` and each missing parent with `mode` (the process umask applies,
/// as with mkdir(2)); directories that exist are left as they are. Returns the directories it created,
/// outermost first, so a caller can give them an owner group or a mode regardless of the umask.
/// Throws the first mkdir that failed for another reason than the directory being there already.
@discardableResult
public func makeDirectories(_ path: String, mode: mode_t) throws(SystemError) -> [String] {
    var created: [String] = []
    var prefix = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
        prefix += "/" + component
        let directory = prefix
        do {
            try syscall("mkdir \(directory)") { mkdir(directory, mode) }
            created.append(directory)
        } catch where error.errno == EEXIST {
            continue
        }
    }
    return created
}
