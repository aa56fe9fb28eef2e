import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Another local user plants the control socket's directory and a listening socket in it (as they can
/// under `/tmp` before the operator's server starts): `studio status` refuses to talk to it, naming
/// the owner, and `studio serve` refuses the directory, naming the owner too.
@Suite struct PlantedSocketTests {
    @Test func aSocketPlantedByAnotherUserIsRefusedByClientAndServer() throws {
        guard geteuid() == 0 else {
            print("PlantedSocketTests skipped: creating a second local user needs root")
            return
        }
        let name = "stdtst" + String(UUID().uuidString.prefix(8)).lowercased()
        let add = try run("/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name])
        guard add.status == 0 else {
            print("PlantedSocketTests skipped: useradd \(name) failed: \(add.error)")
            return
        }
        defer { _ = try? run("/usr/sbin/userdel", [name]) }
        let entry = try #require(getpwnam(name)?.pointee)
        let (uid, gid) = (entry.pw_uid, entry.pw_gid)

        let studio = try StudioHarness()
        let planted = studio.directory.appendingPathComponent("planted").path
        let socketPath = planted + "/studio.sock"
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: false)
        let listener = try listen(at: socketPath)
        defer { close(listener) }
        #expect(chown(planted, uid, gid) == 0 && chown(socketPath, uid, gid) == 0 && chmod(socketPath, 0o777) == 0)

        let status = try studio.run(["status", "--socket", socketPath])
        #expect(status.status != 0, "\(status)")
        #expect(status.error.contains("not connecting to \(socketPath)") && status.error.contains("user \(name) (uid \(uid))"), "\(status)")
        let sessions = try studio.run(["sessions", "--socket", socketPath])
        #expect(sessions.status != 0 && sessions.error.contains("user \(name) (uid \(uid))"), "not a silent fallback to the database: \(sessions)")
        #expect(acceptPending(listener) == false, "the fake server never saw a connection")

        let serve = try studio.run(["serve", "--db", studio.database, "--socket", socketPath])
        #expect(serve.status != 0, "\(serve)")
        #expect(serve.error.contains("belongs to user \(name) (uid \(uid))") && serve.error.contains("refusing to use it"), "\(serve)")
    }

    private func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, error: String) {
        let child = try ChildProcess(executable: executable, arguments: arguments)
        guard case .exited(let code) = child.wait(timeout: 30) else {
            _ = child.stop()
            return (-1, "\(executable) did not finish")
        }
        return (code, child.errorText())
    }

    /// A non-blocking listening socket at `path`.
    private func listen(at path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && Glibc.listen(fd, 4) == 0, "bind \(path): errno \(errno)")
        return fd
    }

    /// Whether a client is waiting in the listener's backlog (accepts and closes it).
    private func acceptPending(_ listener: Int32) -> Bool {
        let fd = accept(listener, nil, nil)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }
}
