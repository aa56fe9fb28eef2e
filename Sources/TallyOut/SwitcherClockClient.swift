#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import StudioCore
import StudioSystem

/// A capture node's clock against its switcher's (issue 32, "one time base"), measured NTP-style over
/// the switcher's HTTP API (`node.tally_from`): on its own thread (`clock.from-switcher`) it asks
/// `GET /api/v1/clock` (the switcher's wall clock) `burst` times every `periodSeconds`, each on a
/// connection opened beforehand (the connect is not in the round trip), and keeps the round trip with
/// the shortest time among the last 16 (`ClockOffsetEstimator`). `onChange` hears the first estimate and
/// every later one that moved by more than `reportThresholdMilliseconds` from the last it heard; a
/// switcher that does not answer leaves the last estimate in place (a clock does not jump) and is asked
/// again at the next period. Nothing else waits for it: `status` reads the newest estimate under a lock.
public final class SwitcherClockClient: Sendable {
    public static let threadName = "clock.from-switcher"
    public static let path = "/api/v1/clock"
    static let periodSeconds = 2.0, burst = 3
    public static let reportThresholdMilliseconds = 5.0
    static let answerSeconds = 2.0

    public let address: ListenAddress
    private let token: String?
    private let clock: WallClock
    private let onChange: @Sendable (_ status: ClockOffsetStatus, _ first: Bool) -> Void
    private let log: @Sendable (String) -> Void
    private let worker = WorkerThread()
    private let state = Mutex(State())

    struct State {
        var estimator = ClockOffsetEstimator()
        var reported: ClockOffsetStatus?
        var failure: String?
    }

    public init(address: ListenAddress, token: String?, clock: WallClock, log: @escaping @Sendable (String) -> Void,
                onChange: @escaping @Sendable (_ status: ClockOffsetStatus, _ first: Bool) -> Void) {
        self.log = log
        self.address = address
        self.token = token
        self.clock = clock
        self.onChange = onChange
    }

    /// Starts the thread and waits up to `seconds` for its first answer (or failure), so what starts
    /// next (the ISO files, whose tags say the time base) finds the clock measured when the switcher is there.
    public func start(waitingUpTo seconds: Double = 0) {
        _ = worker.start(name: Self.threadName) { [self] in run() }
        let deadline = MonotonicClock.now() + UInt64(seconds * 1e9)
        while MonotonicClock.now() < deadline, state.withLock({ $0.estimator.best == nil && $0.failure == nil }) { usleep(5_000) }
    }
    public func stop() { worker.stop() }

    /// The newest estimate (`unmeasured` before the first answer).
    public var status: ClockOffsetStatus { state.withLock { $0.estimator.estimate ?? .unmeasured } }

    /// The current estimate in µs to add to this node's clock; nil before the first answer.
    public var offsetMicroseconds: Int64? { state.withLock { $0.estimator.best?.offset } }

    /// Takes one round trip (or why it failed); says what changed (`onChange`).
    func take(_ result: Result<ClockSample, TallyFollowError>) {
        let report: (ClockOffsetStatus, Bool)? = state.withLock { state in
            switch result {
            case .failure(let error):
                state.failure = error.reason
                return nil
            case .success(let sample):
                state.failure = nil
                guard state.estimator.add(sample), let now = state.estimator.estimate else { return nil }
                let last = state.reported
                guard last == nil || abs((now.offsetMilliseconds ?? 0) - (last?.offsetMilliseconds ?? 0)) > Self.reportThresholdMilliseconds else { return nil }
                state.reported = now
                return (now, last == nil)
            }
        }
        if let report { onChange(report.0, report.1) }
    }

    private func run() {
        var said: String?
        while !worker.isStopRequested {
            for _ in 0..<Self.burst where !worker.isStopRequested {
                let result: Result<ClockSample, TallyFollowError>
                do { result = .success(try exchange()) } catch { result = .failure(error) }
                take(result)
                if case .failure(let error) = result, said != error.reason {
                    said = error.reason
                    log("clock against the switcher at http://\(address): not measured (\(error.reason)); asked again every \(Int(Self.periodSeconds)) s")
                } else if case .success = result {
                    said = nil
                }
                usleep(20_000)
            }
            MonotonicClock.monotonic.sleep(until: MonotonicClock.now() + UInt64(Self.periodSeconds * 1e9), unless: { worker.isStopRequested })
        }
    }

    /// One round trip: the request written on a connection made beforehand, the switcher's wall clock
    /// read from its answer (whole once its body is: the close that follows is not in the round trip).
    private func exchange() throws(TallyFollowError) -> ClockSample {
        let fd: Int32
        do { fd = try HTTPExchange.connect(to: address, seconds: Self.answerSeconds) } catch { throw TallyFollowError(error.reason) }
        defer { close(fd) }
        let sent = clock.now(), sentMonotonic = MonotonicClock.now()
        let answer: HTTPExchange.Answer
        do {
            try HTTPExchange.send("GET", Self.path, on: fd, at: address, token: token, seconds: Self.answerSeconds)
            answer = try HTTPExchange.answer(on: fd, deadline: sentMonotonic + UInt64(Self.answerSeconds * 1e9), seconds: Self.answerSeconds)
        } catch { throw TallyFollowError("GET \(Self.path): \(error.reason)") }
        let roundTrip = Int64(MonotonicClock.now() - sentMonotonic) / 1000
        return ClockSample(sent: sent, server: try Self.serverTime(answer), received: sent + roundTrip)
    }

    /// The switcher's `wall_time_us` in its answer; throws its refusal, or an answer without it.
    static func serverTime(_ answer: HTTPExchange.Answer) throws(TallyFollowError) -> Int64 {
        do { try SwitcherTallyClient.checkStatus(answer) } catch let error as TallyFollowError { throw error } catch {
            throw TallyFollowError("\(error)")
        }
        guard let json = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
              let time = (json["wall_time_us"] as? NSNumber)?.int64Value else {
            throw TallyFollowError("GET \(path) answered no wall_time_us (a switcher older than this node?)")
        }
        return time
    }
}
