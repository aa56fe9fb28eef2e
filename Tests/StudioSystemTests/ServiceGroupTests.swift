import Testing
import Synchronization
import StudioSystem

@Suite struct ServiceGroupTests {
    struct Refused: Error {}

    /// Records what happened, in order.
    final class Journal: Sendable {
        let lines = Mutex<[String]>([])
        func note(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test func servicesStopInTheReverseOfTheOrderTheyStarted() {
        let journal = Journal()
        let group = ServiceGroup(onStop: { journal.note("stopping " + $0) })
        for name in ["store", "control", "outputs", "switcher"] {
            group.start(name, { journal.note("start " + name) }, stop: { journal.note("stop " + name) })
        }
        #expect(group.names == ["store", "control", "outputs", "switcher"])
        group.stopAll()
        #expect(journal.all == [
            "start store", "start control", "start outputs", "start switcher",
            "stopping switcher", "stop switcher", "stopping outputs", "stop outputs",
            "stopping control", "stop control", "stopping store", "stop store",
        ])
        #expect(group.names.isEmpty)
    }

    @Test func aStartThatThrowsLeavesOnlyTheEarlierServicesToStop() {
        let journal = Journal()
        let group = ServiceGroup()
        #expect(throws: Refused.self) {
            try group.start("store", { journal.note("start store") }, stop: { journal.note("stop store") })
            try group.start("control", { throw Refused() }, stop: { journal.note("stop control") })
            group.add("never", stop: { journal.note("stop never") })
        }
        group.stopAll()
        #expect(journal.all == ["start store", "stop store"])
    }

    @Test func eachServiceStopsOnceEvenWhenStopAllRunsTwiceOrFromAStop() {
        let journal = Journal()
        let group = ServiceGroup()
        group.add("a", stop: { journal.note("stop a") })
        group.add("b", stop: {
            journal.note("stop b")
            group.stopAll()
        })
        group.stopAll()
        group.stopAll()
        #expect(journal.all == ["stop b", "stop a"])
    }

    @Test func aMadeServiceIsReturnedAndStoppedWithItself() throws {
        final class Resource: Sendable {
            let closed = Atomic<Bool>(false)
        }
        let group = ServiceGroup()
        let resource = group.make("resource", Resource()) { $0.closed.store(true, ordering: .relaxed) }
        let closedBefore = resource.closed.load(ordering: .relaxed)
        group.stopAll()
        let closedAfter = resource.closed.load(ordering: .relaxed)
        #expect(!closedBefore && closedAfter)
    }

    /// Each stop's duration is reported after it, by name, on the group's clock (here one that only the
    /// stops move): a slow stop says which service it was.
    @Test func eachStopReportsHowLongItTook() {
        let clock = Atomic<UInt64>(1_000), journal = Journal()
        let group = ServiceGroup(onStopped: { name, seconds in journal.note("\(name) \(seconds)") },
                                 now: { clock.load(ordering: .relaxed) })
        group.add("quick", stop: {})
        group.add("slow", stop: { clock.add(2_500_000_000, ordering: .relaxed) })
        group.stopAll()
        #expect(journal.all == ["slow 2.5", "quick 0.0"])
    }
}
