import Synchronization
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// Server log lines to stderr, written by their own thread so that a stalled terminal or journal pipe
/// never stalls a pipeline stage. Lines beyond the queue's capacity are counted and dropped.
public final class ServerLog: Sendable {
    private final class Lines: Sendable {
        let queue = BoundedQueue<String>(capacity: 1024)
        let dropped = Atomic<Int>(0)
    }
    private let lines = Lines()
    private let thread: NamedThread

    public init() {
        let lines = self.lines
        thread = NamedThread.start(name: "studio.log") {
            while case .item(let line) = lines.queue.pop() {
                let lost = lines.dropped.exchange(0, ordering: .relaxed)
                if lost > 0 { writeStandardError("studio: (\(lost) log lines dropped: stderr was not keeping up)\n") }
                writeStandardError(line + "\n")
            }
        }
    }

    /// Lines its queue holds; beyond them lines are dropped and counted.
    var queueCapacity: Int { lines.queue.capacity }

    public func info(_ message: String) {
        if !lines.queue.offer("studio: " + message) { lines.dropped.add(1, ordering: .relaxed) }
    }

    public func close() {
        lines.queue.close()
        thread.join(timeoutSeconds: 2)
    }
}
