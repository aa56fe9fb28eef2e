import Foundation
import Synchronization
import Testing
@testable import Capture
import StudioCore
import StudioSystem
import TestSupport

/// Stable identity through /dev/v4l/by-id. The VM has no udev, so the tests make the links udev would
/// make (`VividRig.makeByIDLink`) and remove /dev/v4l afterwards, leaving vivid as the rig made it.
extension VividTests {
@Suite struct StableIdentity {
    typealias Namer = VividTests.HotPlug.Namer
    typealias Events = VividTests.HotPlug.Events
    static let program = ProgramFormat(width: 640, height: 360, frameRate: Rational(30))
    static let serial1 = VividRig.byIDName(serial: "SERIAL1")
    static let serial2 = VividRig.byIDName(serial: "SERIAL2")

    /// `video0`, `video1`: the nodes the rig made.
    static var nodeNames: [String] { Vivid.nodes.map { String($0.path.split(separator: "/").last!) } }

    @Test func aByIDLinkIsTheIdentityTheNamerGets() throws {
        VividRig.removeByIDDirectory()
        defer { VividRig.removeByIDDirectory() }
        try VividRig.makeByIDLink(Self.serial1, to: Self.nodeNames[0])
        let asked = Mutex<[CameraIdentity]>([])
        let discovery = V4L2Discovery(namer: { identity in
            asked.withLock { list in
                list.append(identity)
                return CameraID("cam\(list.count)")
            }
        }, program: Self.program)
        discovery.start(onAdded: { _ in }, onRemoved: { _ in })
        defer { discovery.stop() }
        let identities = asked.withLock { $0 }
        #expect(identities.map(\.identity) == ["v4l2:by-id:" + Self.serial1, V4L2Discovery.identity(path: Vivid.nodes[1].path, capabilities: Vivid.nodes[1].capabilities)])
        #expect(identities.allSatisfy { $0.backend == .v4l2 && $0.displayName == "vivid" })
        #expect(identities[1].identity.hasPrefix("v4l2:platform:vivid-001"), "no link: bus info + card")
        let cameras = discovery.cameras
        #expect(cameras.map(\.identity) == identities.map(\.identity))
        #expect(cameras.first?.path == Vivid.nodes[0].path)
    }

    @Test func theNameFollowsTheByIDLinkWhenTheNodesRenumber() throws {
        VividRig.removeByIDDirectory()
        defer { VividRig.removeByIDDirectory() }
        let (node0, node1) = (Self.nodeNames[0], Self.nodeNames[1])
        try VividRig.makeByIDLink(Self.serial1, to: node0)
        try VividRig.makeByIDLink(Self.serial2, to: node1)
        let events = Events()
        let discovery = V4L2Discovery(namer: Namer().namer, program: Self.program, log: Vivid.Lines().log)
        discovery.start(onAdded: { camera in
            events.added.withLock { $0.append(camera) }
            camera.start()   // as the server does
        }, onRemoved: { camera in events.removed.withLock { $0.append(camera) } })
        defer {
            discovery.stop()
            for camera in events.added.withLock({ $0 }) { camera.stop() }
        }
        #expect(discovery.cameras.map { "\($0.id) \($0.path) \($0.identity)" } ==
                ["cam1 /dev/\(node0) v4l2:by-id:\(Self.serial1)", "cam2 /dev/\(node1) v4l2:by-id:\(Self.serial2)"])

        // Both unplugged; they come back on each other's node (as USB cameras plugged into other ports
        // would): udev's links now point the other way.
        try VividRig.unbind()
        #expect(waitUntil(seconds: 5, every: 0.02) { events.removedCount("cam1") == 1 && events.removedCount("cam2") == 1 })
        try VividRig.makeByIDLink(Self.serial1, to: node1)
        try VividRig.makeByIDLink(Self.serial2, to: node0)
        try VividRig.bind()
        #expect(waitUntil(seconds: 6, every: 0.02) { events.addedCount("cam1") == 2 && events.addedCount("cam2") == 2 })
        #expect(discovery.cameras.map { "\($0.id) \($0.path) \($0.identity)" } ==
                ["cam1 /dev/\(node1) v4l2:by-id:\(Self.serial1)", "cam2 /dev/\(node0) v4l2:by-id:\(Self.serial2)"])
        #expect(events.added.withLock { $0.count } == 4, "no camera under another name")
        let cam1 = try #require(events.newest("cam1") as? V4L2Camera)
        #expect(waitUntil(seconds: 5, every: 0.02) { cam1.state == .live && cam1.statistics.framesCaptured > 3 })
    }

    @Test func byIDLinksAppearingAndVanishingAreSeenByTheWatch() throws {
        VividRig.removeByIDDirectory()
        defer { VividRig.removeByIDDirectory() }
        let events = Events()
        let lines = Vivid.Lines()
        // No periodic rescan during the test: whatever changes is seen through inotify.
        let discovery = V4L2Discovery(namer: Namer().namer, program: Self.program, rescanInterval: 3600, log: lines.log)
        discovery.start(onAdded: { camera in events.added.withLock { $0.append(camera) } },
                        onRemoved: { camera in events.removed.withLock { $0.append(camera) } })
        defer { discovery.stop() }
        func state() -> [String] { discovery.cameras.map { "\($0.id) \($0.identity.hasPrefix("v4l2:by-id:") ? $0.identity : $0.path)" } }
        let (video0, video1) = (Vivid.nodes[0].path, Vivid.nodes[1].path)
        #expect(state() == ["cam1 \(video0)", "cam2 \(video1)"])
        MonotonicClock.sleep(seconds: 0.5)  // the thread's watches are in place

        // The directories first (as udev makes them), then, once that was seen, the link.
        try FileManager.default.createDirectory(atPath: VividRig.byIDDirectory, withIntermediateDirectories: true)
        MonotonicClock.sleep(seconds: 0.5)
        try VividRig.makeByIDLink(Self.serial1, to: Self.nodeNames[0])
        #expect(waitUntil(seconds: 3, every: 0.02) { state() == ["cam2 \(video1)", "cam3 v4l2:by-id:\(Self.serial1)"] }, "\(state())")
        #expect(events.removedCount("cam1") == 1)
        #expect(lines.all.contains { $0.contains("by-id link now \(Self.serial1), was none") }, "\(lines.all)")

        // The link goes: the node is the bus-info camera again, under its old name.
        try VividRig.removeByIDLink(Self.serial1)
        #expect(waitUntil(seconds: 3, every: 0.02) { state() == ["cam1 \(video0)", "cam2 \(video1)"] }, "\(state())")
        #expect(events.removedCount("cam3") == 1 && events.addedCount("cam1") == 2)

        // /dev/v4l removed and made anew (udev does so with the last and the first camera): still watched.
        VividRig.removeByIDDirectory()
        MonotonicClock.sleep(seconds: 0.5)
        try FileManager.default.createDirectory(atPath: VividRig.byIDDirectory, withIntermediateDirectories: true)
        MonotonicClock.sleep(seconds: 0.5)
        try VividRig.makeByIDLink(Self.serial2, to: Self.nodeNames[1])
        #expect(waitUntil(seconds: 3, every: 0.02) { state() == ["cam1 \(video0)", "cam4 v4l2:by-id:\(Self.serial2)"] }, "\(state())")
        #expect(events.removedCount("cam2") == 1)
    }
}
}

extension VividTests.HotPlug {
    /// A camera another program captures from fails at once (EBUSY): it is tried again after pauses
    /// that double, not every half second, and taken as soon as it is free.
    @Test func aCameraAnotherProgramHoldsIsTriedAgainAfterGrowingPausesAndTakenOnceFree() throws {
        let program = ProgramFormat(width: 640, height: 360, frameRate: Rational(30))
        // The other program: a camera object of this test on the first node.
        let holder = try V4L2Camera(id: "holder", path: Vivid.nodes[0].path, program: program)
        holder.start()
        defer { holder.stop() }
        #expect(waitUntil(seconds: 5, every: 0.02) { holder.state == .live })
        let events = Events()
        let lines = Vivid.Lines()
        let discovery = V4L2Discovery(namer: Namer().namer, program: program, log: lines.log)
        discovery.start(onAdded: { camera in
            events.added.withLock { $0.append(camera) }
            camera.start()   // as the server does
        }, onRemoved: { camera in events.removed.withLock { $0.append(camera) } })
        defer {
            discovery.stop()
            for camera in events.added.withLock({ $0 }) { camera.stop() }
        }
        #expect(waitUntil(seconds: 10, every: 0.02) { lines.all.contains { $0.contains("trying again in 2 s") } }, "\(lines.all)")
        let retries = lines.all.filter { $0.hasPrefix("cam1: ") && $0.contains("removed") }
        #expect(retries.count >= 3 && retries[0].contains("Device or resource busy") && retries[0].contains("trying again in 0.5 s"), "\(retries)")
        #expect(retries[1].contains("trying again in 1 s"), "\(retries)")
        #expect(events.removedCount("cam2") == 0, "the free camera is untouched")

        holder.stop()
        // Free now: taken at the next try (the pause is at most 8 s by now).
        #expect(waitUntil(seconds: 15, every: 0.02) {
            guard let cam1 = events.newest("cam1") as? V4L2Camera else { return false }
            return cam1.state == .live && cam1.statistics.framesCaptured > 3
        })
    }
}
