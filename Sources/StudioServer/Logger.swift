import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// Server log lines to stderr, written by their own thread so that a stalled terminal or journal pipe
/// never stalls a pipeline stage. Lines beyond the queue's capacity are counted and dropped.
public final class ServerLog: Sendable {
    private let queue = BoundedQueue<String>(capacity: 1024)
    private let thread: NamedThread

    public init() {
        let queue = self.queue
        thread = NamedThread.start(name: "studio.log") {
            while case .item(let line) = queue.pop() {
                let text = line + "\n"
                _ = text.withCString { pointer in try? syscall("write") { write(2, pointer, strlen(pointer)) } }
            }
        }
    }

    public func info(_ message: String) { queue.offer("studio: " + message) }

    public func close() {
        queue.close()
        thread.join(timeoutSeconds: 2)
    }
}
