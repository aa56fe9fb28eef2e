// eventstore-writer: a helper for EventStoreTests' crash-safety test. It opens the event store at the
// path given, starts a session and records events in a loop, flushing every few events, until it is
// killed. It reports on stdout, one line each: `session ID` once, then `flushed N` after each flush.
// It exits by itself after 60 s so a test that dies cannot leave it running.
import EventStore
import Foundation
import StudioCore
import StudioSystem

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: eventstore-writer DATABASE\n".utf8))
    exit(2)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

do {
    let store = try EventStore(path: CommandLine.arguments[1])
    let session = try store.startSession(configSnapshot: #"{"writer":"eventstore-writer"}"#)
    say("session \(session)")
    let deadline = MonotonicClock.now() + 60_000_000_000
    var count: Int64 = 0
    while MonotonicClock.now() < deadline {
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
