import Foundation
import Synchronization
import StudioCore
import StudioSystem

/// Keeps what goes and comes back from flooding the history: a camera lost and returned ten times a second (a
/// USB cable going bad), an audio input's source the same. Each camera (device-level and program-level events
/// apart) and each audio input has a `FlapLimiter`: past a few transitions a minute its transitions are held and
/// counted, its first loss and final state still written exactly, and a `camera_flapping` or
/// `audio_input_flapping` summary written per episode and per minute of one (docs/schema.md, "How fast the file
/// grows"). Outputs need none: their reconnect back-off (1 s doubling to 15 s) spaces their transitions.
final class FlapFilter: Sendable {
    /// A pair of transitions and the summary of its flapping, declared once.
    struct Pair: Sendable {
        let lost: EventKind, back: EventKind, summary: EventKind
        /// What the events are about: the camera or the input (nil: not one to limit).
        let subject: @Sendable (StudioEvent) -> String?
    }

    static let pairs: [Pair] = [
        Pair(lost: .cameraLost, back: .cameraReturned, summary: .cameraFlapping) { event in
            // The program's own loss events (the slate shown) apart from the device's.
            event.camera.map { (event.details["scope"] == "program" ? "program " : "") + $0.name }
        },
        Pair(lost: .audioInputLost, back: .audioInputBack, summary: .audioInputFlapping) { $0.details["input"] },
    ]

    private struct Subject: Hashable { let pair: Int, name: String }
    private struct Entry {
        var limiter: FlapLimiter<StudioEvent>
        /// The last transition's event: the summary is about the same camera or input.
        var template: StudioEvent
    }

    private let clock: any Clock
    private let makeLimiter: @Sendable () -> FlapLimiter<StudioEvent>
    private let entries = Mutex<[Subject: Entry]>([:])

    init(clock: any Clock = .monotonic, limiter: @escaping @Sendable () -> FlapLimiter<StudioEvent> = { FlapLimiter() }) {
        self.clock = clock
        self.makeLimiter = limiter
    }

    /// What to pass on for `event`, in order: itself (most events, and transitions within the allowance), nothing
    /// (a transition held), and whatever became due with it.
    func pass(_ event: StudioEvent) -> [StudioEvent] {
        guard let index = Self.pairs.firstIndex(where: { $0.lost == event.kind || $0.back == event.kind }),
              let name = Self.pairs[index].subject(event) else { return [event] }
        let now = clock.now()
        let subject = Subject(pair: index, name: name)
        return entries.withLock { entries in
            var entry = entries[subject] ?? Entry(limiter: makeLimiter(), template: event)
            entry.template = event
            let outputs = entry.limiter.note(event.kind == Self.pairs[index].lost ? .lost : .back, event, at: now)
            entries[subject] = entry
            return outputs.map { Self.event($0, entry.template, Self.pairs[index]) }
        }
    }

    /// What became due without a transition (an episode gone quiet, a long one's minute): call now and then.
    func due() -> [StudioEvent] {
        let now = clock.now()
        return collect { $0.due(at: now) }
    }

    /// Everything held (the server stops).
    func flush() -> [StudioEvent] { collect { $0.flush() } }

    private func collect(_ take: (inout FlapLimiter<StudioEvent>) -> [FlapLimiter<StudioEvent>.Output]) -> [StudioEvent] {
        entries.withLock { entries in
            var events: [StudioEvent] = []
            for subject in entries.keys.sorted(by: { ($0.pair, $0.name) < ($1.pair, $1.name) }) {
                guard var entry = entries[subject] else { continue }
                events += take(&entry.limiter).map { Self.event($0, entry.template, Self.pairs[subject.pair]) }
                entries[subject] = entry
            }
            return events
        }
    }

    private static func event(_ output: FlapLimiter<StudioEvent>.Output, _ template: StudioEvent, _ pair: Pair) -> StudioEvent {
        switch output {
        case .write(let event): return event
        case .summary(let summary):
            var details = ["lost": String(summary.lost), "returned": String(summary.back),
                           "over_ms": String((summary.last - summary.first) / 1_000_000),
                           "state": summary.isLost ? "lost" : "live", "ended": summary.ended ? "true" : "false"]
            for key in ["scope", "input"] { if let value = template.details[key] { details[key] = value } }
            return StudioEvent(kind: pair.summary, camera: template.camera, details: details)
        }
    }
}
