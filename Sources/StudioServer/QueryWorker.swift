import StudioSystem

/// Runs the control plane's slow requests (database queries for `sessions` and `log`) on their own
/// thread, so the control thread keeps answering `switch` and `status` meanwhile.
final class QueryWorker: Sendable {
    private let queue = BoundedQueue<@Sendable () -> Void>(capacity: 32)
    private let thread: NamedThread

    init() {
        let queue = self.queue
        thread = NamedThread.start(name: "studio.query") {
            while case .item(let job) = queue.pop() { job() }
        }
    }

    /// Requests its queue holds; one more is answered busy.
    var queueCapacity: Int { queue.capacity }

    /// Queues `job`; false when 32 are already waiting (the caller answers "busy").
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool { queue.offer(job) }

    func stop() {
        queue.close()
        thread.join(timeoutSeconds: 5)
    }
}
