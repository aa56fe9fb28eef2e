import Synchronization
import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// Finds V4L2 capture nodes (`/dev/video*` whose QUERYCAP says video capture + streaming; metadata and
/// output nodes are skipped) and reports them coming and going.
///
/// Hot-plug: a thread (`v4l2.discovery`) watches `/dev`, `/dev/v4l` and `/dev/v4l/by-id` with inotify
/// (watches are added again when those directories are made anew) and rescans when nodes or by-id links
/// appear or vanish, when a camera reports that its device was lost (a USB camera that fails while its
/// node stays, or vivid's `disconnect` control), and every 2 s. A by-id link that appears or vanishes
/// for a reported node changes its identity (udev may make the link after the node): that camera is
/// reported removed and a new one is reported under the new identity (the namer is asked again). A camera whose node vanished
/// or whose session ended by loss is stopped and reported through `onRemoved`; when a node with the
/// same identity answers again, a new camera object is reported through `onAdded` with the same `id`
/// (the namer is asked again with the same identity).
public final class V4L2Discovery: CameraDiscovery {
    private let state: State

    /// - Parameters:
    ///   - namer: gives each device its `camN` (called on the discovery's thread, or the caller's for
    ///     the cameras present at `start`).
    ///   - program: the program format; each camera picks the mode nearest to it.
    ///   - devDirectory: where device nodes live (tests may point elsewhere); by-id links are looked
    ///     up in `devDirectory/v4l/by-id`.
    ///   - rescanInterval: the safety-net rescan period in seconds (inotify and loss reports wake the
    ///     thread sooner).
    ///   - clock: times the safety-net rescans and the pauses before a lost device is opened again, and
    ///     is handed to each camera it makes (tests pass a `ManualClock`).
    ///   - prepare: runs on each new camera object before it is reported (on the discovery's thread),
    ///     also when a device returns: where the server applies configured mode and controls.
    public init(namer: @escaping CameraNamer, program: ProgramFormat = .default, devDirectory: String = "/dev",
                rescanInterval: Double = 2, clock: any Clock = .monotonic, log: @escaping CaptureLog = standardErrorCaptureLog,
                prepare: (@Sendable (V4L2Camera) -> Void)? = nil) {
        state = State(namer: namer, program: program, devDirectory: devDirectory, rescanInterval: rescanInterval, clock: clock,
                      log: log, prepare: prepare)
    }

    deinit { state.shutdown() }

    public func start(onAdded: @escaping @Sendable (any Camera) -> Void, onRemoved: @escaping @Sendable (any Camera) -> Void) {
        state.start(onAdded: onAdded, onRemoved: onRemoved)
    }

    public func stop() { state.shutdown() }

    /// The cameras reported and not removed, by name.
    public var cameras: [V4L2Camera] { state.cameras.sorted { $0.id < $1.id } }

    /// The capture nodes present now, with what QUERYCAP says (for `studio cameras` and tests).
    public static func captureNodes(devDirectory: String = "/dev") -> [(path: String, capabilities: V4L2Capabilities)] {
        videoNodeNames(in: devDirectory).compactMap { name in
            let path = devDirectory + "/" + name
            guard let device = try? V4L2Device(path: path), let caps = try? device.capabilities(), caps.isVideoCapture else { return nil }
            return (path, caps)
        }
    }

    /// A device's identity that survives replugging and renumbering: its `/dev/v4l/by-id` name when udev
    /// made one (`v4l2:by-id:NAME`), else bus info + card name (+ the USB serial number from sysfs when
    /// there is one).
    public static func identity(path: String, capabilities: V4L2Capabilities, byIDDirectory: String = "/dev/v4l/by-id") -> String {
        if let name = byIDName(of: path, in: byIDDirectory) { return "v4l2:by-id:" + name }
        let target = V4L2Files.realPath(path) ?? path
        var text = "v4l2:\(capabilities.busInfo):\(capabilities.card)"
        let node = String(target.split(separator: "/").last ?? "")
        if let device = V4L2Files.realPath("/sys/class/video4linux/\(node)/device"),
           let serial = V4L2Files.readSmallFile(device + "/../serial") ?? V4L2Files.readSmallFile(device + "/serial"), !serial.isEmpty {
            text += ":" + serial
        }
        return text
    }

    /// The name of the first (sorted) link in `byIDDirectory` that resolves to `path`; nil when none does.
    public static func byIDName(of path: String, in byIDDirectory: String = "/dev/v4l/by-id") -> String? {
        let target = V4L2Files.realPath(path) ?? path
        return V4L2Files.directoryEntries(byIDDirectory).sorted().first { V4L2Files.realPath(byIDDirectory + "/" + $0) == target }
    }

    static func videoNodeNames(in directory: String) -> [String] {
        V4L2Files.directoryEntries(directory).filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }
    }
}

extension V4L2Discovery {
    /// The discovery's state, held by its thread.
    final class State: Sendable {
        struct Tracked: Sendable {
            var camera: V4L2Camera
            var path: String
            /// The by-id link name the identity came from (nil: bus info + card).
            var byID: String?
        }
        struct Book: Sendable {
            var tracked: [String: Tracked] = [:]   // by identity
            var lost: Set<ObjectIdentifier> = []   // cameras that reported a loss
            var retryAfter: [String: UInt64] = [:] // identity -> earliest monotonic ns to re-add after a loss
            var failedStarts: [String: Int] = [:]  // identity -> losses in a row before any frame (busy device...)
            var onAdded: (@Sendable (any Camera) -> Void)?
            var onRemoved: (@Sendable (any Camera) -> Void)?
            var started = false
        }

        let namer: CameraNamer
        let program: ProgramFormat
        let devDirectory: String
        let byIDDirectory: String
        let rescanInterval: Double
        let clock: any Clock
        let log: CaptureLog
        let prepare: (@Sendable (V4L2Camera) -> Void)?
        private let book = Mutex(Book())
        private let worker = WorkerThread()
        /// Self-pipe: a camera's loss handler writes a byte to wake the thread.
        private let wake: (read: Int32, write: Int32)

        init(namer: @escaping CameraNamer, program: ProgramFormat, devDirectory: String, rescanInterval: Double,
             clock: any Clock, log: @escaping CaptureLog, prepare: (@Sendable (V4L2Camera) -> Void)?) {
            self.prepare = prepare
            self.clock = clock
            self.namer = namer
            self.program = program
            self.devDirectory = devDirectory
            byIDDirectory = devDirectory + "/v4l/by-id"
            self.rescanInterval = max(rescanInterval, 0.1)
            self.log = log
            var fds: [Int32] = [-1, -1]
            if pipe(&fds) == 0 {
                _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
                _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
                _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            }
            wake = (fds[0], fds[1])
        }

        deinit {
            if wake.read >= 0 { close(wake.read) }
            if wake.write >= 0 { close(wake.write) }
        }

        var cameras: [V4L2Camera] { book.withLock { $0.tracked.values.map(\.camera) } }

        func start(onAdded: @escaping @Sendable (any Camera) -> Void, onRemoved: @escaping @Sendable (any Camera) -> Void) {
            let first = book.withLock { book -> Bool in
                defer { book.started = true }
                book.onAdded = onAdded
                book.onRemoved = onRemoved
                return !book.started
            }
            guard first else { return }
            rescan()
            worker.start(name: "v4l2.discovery") { [self] in watch() }
        }

        func shutdown() {
            worker.requestStop()
            signalWake()
            worker.stop()
            book.withLock {
                $0.onAdded = nil
                $0.onRemoved = nil
            }
        }

        private func signalWake() {
            var byte: UInt8 = 1
            if wake.write >= 0 { _ = write(wake.write, &byte, 1) }
        }

        private func watch() {
            let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            defer { if inotify >= 0 { close(inotify) } }
            // /dev/v4l and /dev/v4l/by-id come and go with the first/last camera (udev removes empty
            // directories): each is watched while it exists and watched again when it is made anew.
            var v4lWatch: Int32 = -1
            var byIDWatch: Int32 = -1
            func addDirectoryWatches() {
                guard inotify >= 0 else { return }
                if v4lWatch < 0 { v4lWatch = inotify_add_watch(inotify, devDirectory + "/v4l", UInt32(IN_CREATE | IN_DELETE)) }
                if byIDWatch < 0 { byIDWatch = inotify_add_watch(inotify, byIDDirectory, UInt32(IN_CREATE | IN_DELETE)) }
            }
            if inotify >= 0 {
                if inotify_add_watch(inotify, devDirectory, UInt32(IN_CREATE | IN_DELETE | IN_ATTRIB)) < 0 {
                    log("v4l2: cannot watch \(devDirectory) (inotify_add_watch: \(String(cString: strerror(errno)))); rescanning every \(rescanInterval) s only")
                }
                addDirectoryWatches()
            } else {
                log("v4l2: inotify_init1: \(String(cString: strerror(errno))); rescanning every \(rescanInterval) s only")
            }
            let interval = UInt64(rescanInterval * 1e9)
            var lastScan = clock.now()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !worker.isStopRequested {
                var descriptors = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                                   pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
                let ready = (try? syscall("poll") { poll(&descriptors, 2, 500) }) ?? 0
                if worker.isStopRequested { break }
                var changed = false
                if ready > 0 {
                    if descriptors[0].revents != 0 {
                        while true {
                            let count = read(inotify, &buffer, buffer.count)
                            guard count > 0 else { break }
                            changed = true
                            // A watch whose directory was deleted ends with IN_IGNORED: forget it.
                            for (descriptor, mask) in Self.inotifyEvents(buffer, count: count) where mask & UInt32(IN_IGNORED) != 0 {
                                if descriptor == v4lWatch { v4lWatch = -1 }
                                if descriptor == byIDWatch { byIDWatch = -1 }
                            }
                        }
                    }
                    if descriptors[1].revents != 0 {
                        while read(wake.read, &buffer, buffer.count) > 0 {}
                        changed = true
                    }
                }
                let now = clock.now()
                let retryDue = book.withLock { $0.retryAfter.values.contains { $0 <= now } }
                if changed || retryDue || now - lastScan > interval {
                    // Let udev finish with a new node (permissions, by-id link) before opening it.
                    if changed { MonotonicClock.sleep(nanoseconds: 100_000_000) }
                    addDirectoryWatches()
                    rescan()
                    lastScan = clock.now()
                }
            }
        }

        /// (watch descriptor, mask) of each `inotify_event` in the first `count` bytes of `buffer`.
        static func inotifyEvents(_ buffer: [UInt8], count: Int) -> [(Int32, UInt32)] {
            var events: [(Int32, UInt32)] = []
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            buffer.withUnsafeBytes { raw in
                while offset + header <= count {
                    let descriptor = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let nameLength = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    events.append((descriptor, mask))
                    offset += header + nameLength
                }
            }
            return events
        }

        /// Reconciles what is reported with what is present: removes lost cameras and vanished nodes,
        /// adds capture nodes not yet reported.
        func rescan() {
            // 1. Cameras whose session ended by loss, and cameras whose node is gone.
            let present = Set(V4L2Discovery.videoNodeNames(in: devDirectory).map { devDirectory + "/" + $0 })
            let (gone, removed) = book.withLock { book -> ([(camera: V4L2Camera, reason: String)], (@Sendable (any Camera) -> Void)?) in
                var gone: [(camera: V4L2Camera, reason: String)] = []
                for (identity, entry) in book.tracked {
                    let wasLost = book.lost.contains(ObjectIdentifier(entry.camera))
                    let isPresent = present.contains(entry.path)
                    // A by-id link that appeared, vanished or changed: the node is the same, its identity is not.
                    let byIDNow = isPresent ? V4L2Discovery.byIDName(of: entry.path, in: byIDDirectory) : entry.byID
                    guard wasLost || !isPresent || byIDNow != entry.byID else { continue }
                    var reason = wasLost ? entry.camera.lossReason ?? "device lost"
                        : !isPresent ? "node gone"
                        : "by-id link now \(byIDNow ?? "none"), was \(entry.byID ?? "none"): identified again"
                    book.tracked[identity] = nil
                    if wasLost {
                        // Give a device that failed a moment before it is opened again; one that fails
                        // before delivering any frame (another program holds it: EBUSY) is tried again
                        // after pauses that double up to 30 s, not every half second.
                        let failures = entry.camera.statistics.framesCaptured == 0 ? (book.failedStarts[identity] ?? 0) + 1 : 0
                        book.failedStarts[identity] = failures
                        let pause = failures == 0 ? 0.5 : min(0.5 * Double(1 << min(failures - 1, 6)), 30)
                        book.retryAfter[identity] = clock.now() + UInt64(pause * 1e9)
                        if failures > 0 { reason += "; trying again in \(pause == pause.rounded() ? String(Int(pause)) : String(pause)) s" }
                    }
                    gone.append((entry.camera, reason))
                }
                book.lost = []
                return (gone, book.onRemoved)
            }
            for (camera, reason) in gone {
                camera.stop()
                log("\(camera.id): \(camera.path) removed (\(reason))")
                removed?(camera)
            }
            // 2. Capture nodes not reported yet.
            let trackedPaths = book.withLock { Set($0.tracked.values.map(\.path)) }
            for path in present.sorted() where !trackedPaths.contains(path) {
                guard let device = try? V4L2Device(path: path), let caps = try? device.capabilities() else { continue }
                device.close()
                guard caps.isVideoCapture else { continue }
                let byID = V4L2Discovery.byIDName(of: path, in: byIDDirectory)
                let identity = V4L2Discovery.identity(path: path, capabilities: caps, byIDDirectory: byIDDirectory)
                let now = clock.now()
                let skip = book.withLock { book -> Bool in
                    if book.tracked[identity] != nil { return true }
                    if let after = book.retryAfter[identity], after > now { return true }
                    book.retryAfter[identity] = nil
                    return false
                }
                if skip { continue }
                let id: CameraID
                do {
                    id = try namer(CameraIdentity(backend: .v4l2, identity: identity, displayName: caps.card))
                } catch {
                    log("v4l2: cannot name \(path) (\(caps.card)): \(error)")
                    continue
                }
                let camera: V4L2Camera
                do {
                    camera = try V4L2Camera(id: id, path: path, identity: identity, displayName: caps.card, program: program,
                                        clock: clock, log: log)
                } catch {
                    log("v4l2: skipping \(path) (\(caps.card)): \(error)")
                    continue
                }
                camera.setLossHandler { [weak self] camera in self?.cameraLost(camera) }
                prepare?(camera)
                let added = book.withLock { book -> (@Sendable (any Camera) -> Void)? in
                    book.tracked[identity] = Tracked(camera: camera, path: path, byID: byID)
                    return book.onAdded
                }
                log("\(id): \(path) \(caps.card) [\(identity)], capturing \(camera.wantedMode)")
                added?(camera)
            }
            // 3. Pauses that ended for nodes that are gone: done (otherwise the thread would rescan on every wake).
            let now = clock.now()
            book.withLock { book in book.retryAfter = book.retryAfter.filter { $0.value > now } }
        }

        private func cameraLost(_ camera: V4L2Camera) {
            book.withLock { _ = $0.lost.insert(ObjectIdentifier(camera)) }
            signalWake()
        }
    }
}

// MARK: Small file-system helpers (plain syscalls; Capture does not use Foundation)

/// Namespaced so other backends in Capture can have their own helpers without clashes.
enum V4L2Files {
    static func directoryEntries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self).v4l2TrimmingWhitespace
    }
}
