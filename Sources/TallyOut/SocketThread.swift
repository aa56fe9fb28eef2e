#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import StudioCore
import StudioSystem

/// A bound socket, the pipe that wakes the thread serving it, and that thread: what the vMix server and
/// the OSC server share. `start` binds (throwing when the address cannot be had) and runs `body` on the
/// thread with the socket and the wake pipe's read end; `wake` makes its poll return; `stop` wakes and
/// joins the thread, then closes all three.
final class SocketThread: Sendable {
    private let worker = WorkerThread()
    private let sockets = Mutex<(socket: Int32, wakeRead: Int32, wakeWrite: Int32)>((-1, -1, -1))

    var isStopRequested: Bool { worker.isStopRequested }

    /// The bound port (the kernel's choice when `address` says 0). `prepare` runs on the bound socket
    /// before the thread starts (`listen` for a TCP server).
    func start(_ address: ListenAddress, type: __socket_type, threadName: String,
               prepare: (Int32) throws(SystemError) -> Void = { _ in },
               _ body: @escaping @Sendable (_ socket: Int32, _ wake: Int32) -> Void) throws(SystemError) -> UInt16 {
        let fd = try TallySockets.open(for: address, type: type)
        let pair: (read: Int32, write: Int32)
        do {
            try TallySockets.bind(fd, to: address)
            try prepare(fd)
            pair = try TallySockets.wakePair()
        } catch {
            close(fd)
            throw error
        }
        sockets.withLock { $0 = (fd, pair.read, pair.write) }
        _ = worker.start(name: threadName) { body(fd, pair.read) }
        return TallySockets.boundPort(fd)
    }

    func wake() { TallySockets.wake(sockets.withLock { $0.wakeWrite }) }

    func stop() {
        worker.requestStop()
        wake()
        worker.stop()
        let fds = sockets.withLock { fds in defer { fds = (-1, -1, -1) }; return fds }
        for fd in [fds.socket, fds.wakeRead, fds.wakeWrite] where fd >= 0 { close(fd) }
    }
}
