#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Control

/// Out of descriptors, `accept` leaves the client pending and the listener readable: the loop must stop
/// polling the listener for a moment instead of spinning (RLIMIT_NOFILE is process-wide, so the rule is
/// tested here, not by exhausting descriptors).
private func polls(_ backoff: inout AcceptBackoff, _ now: UInt64) -> Bool { backoff.pollsListener(now: now) }
private func failed(_ backoff: inout AcceptBackoff, _ errno: Int32, _ now: UInt64) -> AcceptBackoff.Next {
    backoff.acceptFailed(errno: errno, now: now)
}

@Suite struct AcceptBackoffTests {
    let t0: UInt64 = 5_000_000_000
    let ms: UInt64 = 1_000_000

    @Test(arguments: [EMFILE, ENFILE, ENOBUFS, ENOMEM])
    func runningOutOfResourcesPausesTheListener(errno: Int32) {
        var backoff = AcceptBackoff()
        #expect(polls(&backoff, t0))
        #expect(backoff.pollTimeout(now: t0) == -1, "no timeout while nothing is paused")

        #expect(failed(&backoff, errno, t0) == .paused)
        #expect(!polls(&backoff, t0))
        #expect(backoff.pollTimeout(now: t0) == 100, "poll wakes up when the pause ends")
        #expect(!polls(&backoff, t0 + 60 * ms))
        #expect(backoff.pollTimeout(now: t0 + 60 * ms) == 40)
        #expect(backoff.pollTimeout(now: t0 + 60 * ms + 1) == 40, "rounded up, never a busy 0 before the end")
        #expect(backoff.pollTimeout(now: t0 + 100 * ms) == 0)

        #expect(polls(&backoff, t0 + 100 * ms), "polled again after 100 ms")
        #expect(backoff.pollTimeout(now: t0 + 100 * ms) == -1)
        #expect(polls(&backoff, t0 + 101 * ms))
    }

    @Test func aRepeatedFailureExtendsThePause() {
        var backoff = AcceptBackoff()
        _ = backoff.acceptFailed(errno: EMFILE, now: t0)
        #expect(polls(&backoff, t0 + 100 * ms))
        #expect(failed(&backoff, EMFILE, t0 + 100 * ms) == .paused)
        #expect(!polls(&backoff, t0 + 150 * ms))
        #expect(polls(&backoff, t0 + 200 * ms))
    }

    @Test func nothingPendingOrAGoneClientDoesNotPause() {
        var backoff = AcceptBackoff()
        #expect(failed(&backoff, EAGAIN, t0) == .waitForReadiness)
        #expect(failed(&backoff, ECONNABORTED, t0) == .acceptNext)
        #expect(failed(&backoff, EPROTO, t0) == .acceptNext)
        #expect(polls(&backoff, t0))
        #expect(backoff.pollTimeout(now: t0) == -1)
    }

    @Test func anUnexpectedErrorPausesRatherThanSpins() {
        var backoff = AcceptBackoff()
        #expect(failed(&backoff, EINVAL, t0) == .paused)
        #expect(!polls(&backoff, t0 + 1))
    }
}
