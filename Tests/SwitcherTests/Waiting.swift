import StudioSystem

/// Polls `condition` every 5 ms until it holds or `timeout` seconds (real time: generous, it only bounds
/// a test that fails) pass; whether it held.
func waitUntil(timeout: Double = 20, _ condition: () -> Bool) -> Bool {
    let deadline = MonotonicClock.now() + UInt64(timeout * 1e9)
    while MonotonicClock.now() < deadline {
        if condition() { return true }
        MonotonicClock.sleep(seconds: 0.005)
    }
    return condition()
}
