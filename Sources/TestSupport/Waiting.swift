import StudioSystem

/// The tests' one wait: polls `condition` every `interval` seconds until it holds or `seconds` pass
/// (real time, and generous: it only bounds a test that fails, a passing one goes on as soon as the
/// condition holds); whether it held. No test sleeps a fixed time instead. A condition that asks a
/// running server (a CLI child, a socket request) polls every 0.1 s, not to load a 2-core machine.
public func waitUntil(seconds: Double = 20, every interval: Double = 0.005, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = MonotonicClock.now() + UInt64(max(0, seconds) * 1e9)
    while MonotonicClock.now() < deadline {
        if try condition() { return true }
        MonotonicClock.sleep(seconds: max(0.001, interval))
    }
    return try condition()
}
