// eventstore-writer: a helper for EventStoreTests' crash-safety tests. It opens the event store at the
// path given, starts a session and records events in a loop, flushing every few events, until it is
// killed. It reports on stdout, one line each: `session ID` once, then `flushed N` after each flush.
// With `--idle-after N` it stops recording after N events and prints `idle`, leaving only the store's
// heartbeat running (every `--heartbeat-ms` ms, default the store's). It exits by itself after 60 s so a
// test that dies cannot leave it running.
import EventStore
import Foundation
import StudioCore
import StudioSystem

/// Takes `--name N` out of `arguments`, returning N.
func option(_ name: String, from arguments: inout [String]) -> Int? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let value = Int(arguments[index + 1]) else { return nil }
    arguments.removeSubrange(index...index + 1)
    return value
}
var arguments = Array(CommandLine.arguments.dropFirst())
let heartbeatMilliseconds = option("--heartbeat-ms", from: &arguments)
let idleAfter = option("--idle-after", from: &arguments)
guard arguments.count == 1 else {
    FileHandle.standardError.write(Data("usage: eventstore-writer DATABASE [--heartbeat-ms N] [--idle-after N]\n".utf8))
    exit(2)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

do {
    var limits = EventStoreLimits()
    if let heartbeatMilliseconds { limits.heartbeatIntervalSeconds = Double(heartbeatMilliseconds) / 1000 }
    let store = try EventStore(path: arguments[0], limits: limits)
    let session = try store.startSession(configSnapshot: #"{"writer":"eventstore-writer"}"#)
    say("session \(session)")
    let deadline = MonotonicClock.now() + 60_000_000_000
    var count: Int64 = 0
    while MonotonicClock.now() < deadline {
        if let idleAfter, count >= idleAfter {
            store.flush()
            say("idle")
            MonotonicClock.sleep(until: deadline)
            break
        }
        count += 1
        store.record(StudioEvent(kind: .switchProgram, camera: CameraID("cam\(count % 3 + 1)"),
                                 programTime: .milliseconds(count * 33), details: ["n": "\(count)", "pad": String(repeating: "x", count: 200)]))
        if count % 25 == 0 {
            store.flush()
            say("flushed \(count)")
        }
        MonotonicClock.sleep(nanoseconds: 200_000)
    }
    try store.endSession(reason: "stopped")
    store.close()
} catch {
    FileHandle.standardError.write(Data("eventstore-writer: \(error)\n".utf8))
    exit(1)
}
