import CSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A dedicated OS thread with a name (visible in `top -H` and gdb). Capture, program clock, encoders,
/// outputs, the control socket and the event store each run on one, never on Swift's cooperative pool.
public final class NamedThread: Sendable {
    public let name: String
    private let done = ConditionLock()

    private init(name: String) { self.name = name }

    /// Starts `body` on a new thread named `name` (truncated to the kernel's 15 characters).
    @discardableResult
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> NamedThread {
        let thread = NamedThread(name: name)
        let box = Unmanaged.passRetained(ThreadStart(name: name, body: body, thread: thread))
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { raw in
            let start = Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue()
            _ = csys_set_thread_name(start.name)
            start.body()
            start.thread.done.withLock { start.thread.finishedFlag = true }
            start.thread.done.broadcast()
            return nil
        }, box.toOpaque())
        precondition(result == 0, "pthread_create failed: \(result)")
        pthread_detach(handle)
        return thread
    }

    // Guarded by `done`.
    nonisolated(unsafe) private var finishedFlag = false

    public var isFinished: Bool { done.withLock { finishedFlag } }

    /// Waits for the thread's body to return. Returns false on timeout.
    @discardableResult
    public func join(timeoutSeconds: Double? = nil) -> Bool {
        let deadline = timeoutSeconds.map { MonotonicClock.now() + UInt64($0 * 1e9) }
        return done.withLock {
            while !finishedFlag {
                if let deadline {
                    if !done.wait(untilMonotonic: deadline) && !finishedFlag { return false }
                } else {
                    done.wait()
                }
            }
            return true
        }
    }
}

private final class ThreadStart: @unchecked Sendable {
    // Immutable after init; handed from the creating thread to the new one once.
    let name: String
    let body: @Sendable () -> Void
    let thread: NamedThread
    init(name: String, body: @escaping @Sendable () -> Void, thread: NamedThread) {
        self.name = name
        self.body = body
        self.thread = thread
    }
}

/// A pthread mutex with one condition variable (waits use CLOCK_MONOTONIC).
///
/// `@unchecked Sendable`: the pthread objects are heap-allocated once, never moved, and only touched
/// through pthread calls, which are thread-safe by contract.
public final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Must hold the lock.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Must hold the lock. Returns false if the deadline passed.
    public func wait(untilMonotonic deadline: UInt64) -> Bool {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &ts) != ETIMEDOUT
    }

    public func signal() { pthread_cond_signal(condition) }
    public func broadcast() { pthread_cond_broadcast(condition) }
}

/// The start / stop-flag / join lifecycle of a restartable worker thread (a camera's capture loop, the
/// program clock, the tone generator): its body polls `isStopRequested` and returns when it is set.
public final class WorkerThread: Sendable {
    private let thread = Mutex<NamedThread?>(nil)
    private let stopRequested = Atomic<Bool>(false)

    public init() {}

    /// Starts `body` on a thread named `name`, unless the previous one is still running (then returns
    /// false and does nothing). `prepare` runs first, under the same lock, only when it does start.
    @discardableResult
    public func start(name: String, prepare: () -> Void = {}, _ body: @escaping @Sendable () -> Void) -> Bool {
        thread.withLock { thread in
            if let existing = thread, !existing.isFinished { return false }
            stopRequested.store(false, ordering: .sequentiallyConsistent)
            prepare()
            thread = NamedThread.start(name: name, body)
            return true
        }
    }

    public var isStopRequested: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    /// Asks the body to return, without waiting (safe from deinit and from the thread itself).
    public func requestStop() { stopRequested.store(true, ordering: .sequentiallyConsistent) }

    /// Asks the body to return and waits until it has.
    public func stop() {
        requestStop()
        let running = thread.withLock { thread -> NamedThread? in
            defer { thread = nil }
            return thread
        }
        running?.join()
    }
}
