import Foundation
import StudioCore
import StudioSystem
import StudioConfig
import Encoding
import MediaSupport
import Capture
import EventStore
import Control
#if canImport(Glibc)
import Glibc
#endif

/// `studio doctor`: what this machine offers a studio and what is wrong, in plain words. Each check
/// says ok / warning / problem and, when it is not ok, what to do.
public enum Doctor {
    public typealias Status = DoctorCheck.Status
    public typealias Check = DoctorCheck

    /// Runs every check for a server that would run with `options`. Takes a few seconds at most (the
    /// encoder's speed is measured for half a second; the RTMP reachability check waits up to
    /// `connectTimeout` per destination).
    public static func run(_ options: ServerOptions, environment: [String: String], connectTimeout: Double = 2) -> [Check] {
        // libav*'s own notes (x264's statistics after the speed probe) are not the doctor's to print.
        FFmpegLogging.configure(verbose: false)
        var checks: [Check] = []
        // Each source backend's own checks (V4L2's devices, PipeWire's daemon), whichever are enabled.
        let network = options.configuration.network
        let context = BackendDoctorContext(program: options.configuration.program, environment: environment, networkPulls: network.cameras,
                                           srtListener: network.srt, rtmpServer: network.rtmp?.server)
        for backend in options.backends { checks += backend.doctorChecks(context) }
        checks += renderNodes()
        checks.append(groups())
        checks += encoders()
        checks.append(encoderSpeed(programEncoderSettings(options.configuration)))
        checks.append(database(options.databasePath))
        if let check = eventsLost(options.databasePath) { checks.append(check) }
        if let check = databaseReplaced(options.databasePath) { checks.append(check) }
        checks.append(recordings(options.configuration))
        checks += HTTPToken.doctorChecks(options.configuration.http, databasePath: options.databasePath)
        for output in options.configuration.outputs { checks.append(reachability(output, timeout: connectTimeout)) }
        if options.configuration.outputs.isEmpty {
            checks.append(Check("outputs", .warning, "no RTMP destination configured: the program is not streamed",
                                fix: "add `--rtmp rtmp://host/app/KEY` or an `outputs:` entry in the config"))
        }
        return checks
    }

    // MARK: the checks

    /// A frame rate as the doctor writes it (`30`, `12.5`), the same as in the V4L2 lines.
    static func describe(_ rate: Double) -> String { V4L2Doctor.describe(rate) }

    static func renderNodes() -> [Check] {
        let nodes = VAAPIProbe.renderNodes()
        guard !nodes.isEmpty else {
            return [Check("gpu", .warning, "no GPU render node (/dev/dri/renderD*): H.264 is encoded in software (x264)",
                          fix: "on a machine with an Intel or AMD GPU, install the VAAPI driver (intel-media-va-driver or mesa-va-drivers)")]
        }
        return nodes.map { node in
            switch VAAPIProbe.probe(renderNode: node) {
            case .usable(let device):
                let profiles = device.profiles.map(\.rawValue).joined(separator: ", ")
                return Check("gpu", .ok, "\(node): \(device.driver): H.264 encode (\(profiles))\(device.lowPower ? ", low-power" : ""): VAAPI will be used")
            case .unusable(let failure):
                switch failure.reason {
                case .permissionDenied:
                    return Check("gpu", .problem, failure.description, fix: "sudo usermod -aG render $USER, then log in again")
                case .noH264Encode:
                    return Check("gpu", .warning, failure.description, fix: "this GPU or driver cannot encode H.264: x264 is used")
                default:
                    return Check("gpu", .warning, failure.description, fix: "install or update the VAAPI driver; until then x264 is used")
                }
            }
        }
    }

    static func groups() -> Check {
        if getuid() == 0 { return Check("groups", .ok, "running as root (the systemd unit runs as user studio in video and render)") }
        let count = getgroups(0, nil)
        var ids = [gid_t](repeating: 0, count: Int(max(count, 0)))
        _ = getgroups(count, &ids)
        let names = Set(ids.compactMap { id -> String? in getgrgid(id).map { String(cString: $0.pointee.gr_name) } })
        let missing = ["video", "render"].filter { !names.contains($0) }
        return missing.isEmpty
            ? Check("groups", .ok, "member of video and render")
            : Check("groups", .warning, "not in group(s) \(missing.joined(separator: ", ")): cameras or the GPU may be refused",
                    fix: missing.map { "sudo usermod -aG \($0) $USER" }.joined(separator: "; ") + ", then log in again")
    }

    static func encoders() -> [Check] {
        [
            EncoderCatalog.isAvailable("libx264")
                ? Check("ffmpeg", .ok, "libx264 encoder present")
                : Check("ffmpeg", .problem, "libavcodec has no libx264 encoder: no video can be encoded", fix: "sudo apt-get install libavcodec59 (Debian's build includes libx264)"),
            EncoderCatalog.isAvailable("aac")
                ? Check("ffmpeg", .ok, "aac encoder present")
                : Check("ffmpeg", .problem, "libavcodec has no aac encoder", fix: "install Debian's libavcodec"),
            EncoderCatalog.isAvailable("h264_vaapi")
                ? Check("ffmpeg", .ok, "h264_vaapi encoder present")
                : Check("ffmpeg", .warning, "libavcodec has no h264_vaapi encoder: no hardware encoding", fix: "install Debian's libavcodec (built with VAAPI)"),
        ]
    }

    static func database(_ path: String) -> Check {
        let manager = FileManager.default
        if manager.fileExists(atPath: path) {
            return manager.isWritableFile(atPath: path)
                ? Check("database", .ok, "\(path) exists and is writable")
                : Check("database", .problem, "\(path) is not writable by this user", fix: "run as the user that owns it, or pass --db")
        }
        var directory = (path as NSString).deletingLastPathComponent
        while !directory.isEmpty, directory != "/", !manager.fileExists(atPath: directory) {
            directory = (directory as NSString).deletingLastPathComponent
        }
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
            return Check("database", .problem, "\(path) cannot be created: \(directory) is a file, not a directory",
                         fix: "pass --db with a path in a directory")
        }
        return manager.isWritableFile(atPath: directory.isEmpty ? "." : directory)
            ? Check("database", .ok, "\(path) will be created on first start")
            : Check("database", .problem, "\(path) cannot be created: \(directory) is not writable", fix: "pass --db with a writable path, or create the directory")
    }

    /// Whether the latest session lost events while the database refused writes (its `events_lost` events);
    /// nil when there is no readable database yet.
    static func eventsLost(_ path: String) -> Check? {
        guard FileManager.default.fileExists(atPath: path), let store = try? EventStore.openReadOnly(path: path) else { return nil }
        defer { store.close() }
        guard let session = try? store.session(id: nil), let events = try? store.events(sessionID: session.id) else { return nil }
        let losses = events.filter { $0.kind == .eventsLost }
        guard !losses.isEmpty else {
            return Check("event log", .ok, "session \(session.id) lost no events")
        }
        let lost = losses.compactMap { $0.details["lost"].flatMap { Int($0) } }.reduce(0, +)
        return Check("event log", .warning,
                     "session \(session.id) lost \(lost) event(s) while the database refused writes (\(losses.count) events_lost event(s); last at \(ISO8601Time.format(losses[losses.count - 1].wallTime)))",
                     fix: "keep other programs from holding the database's write lock (sqlite3 BEGIN EXCLUSIVE, backups without .backup), and check the disk has room",
                     details: ["session": "\(session.id)", "lost": "\(lost)"])
    }

    /// Whether the latest session continues one whose database file was deleted or replaced mid-show (its
    /// `database_replaced` event); nil when it does not, or there is no readable database.
    static func databaseReplaced(_ path: String) -> Check? {
        guard FileManager.default.fileExists(atPath: path), let store = try? EventStore.openReadOnly(path: path) else { return nil }
        defer { store.close() }
        guard let session = try? store.session(id: nil), let events = try? store.events(sessionID: session.id),
              let replaced = events.last(where: { $0.kind == .databaseReplaced }) else { return nil }
        let previous = replaced.details["previous_session"] ?? "?"
        let old = replaced.details["old_file"].map { $0 == "deleted" ? "was deleted" : "is now \($0)" } ?? "is unknown"
        return Check("event log", .warning,
                     "session \(session.id) continues session \(previous), whose database file was \(replaced.details["reason"] ?? "replaced") at \(ISO8601Time.format(replaced.wallTime)) (the old file \(old); \(replaced.details["events_in_old_file"] ?? "?") event(s) went with it)",
                     fix: "don't delete or move the database while the server runs; to keep a copy use `sqlite3 \(path) .backup COPY`",
                     details: ["session": "\(session.id)", "previous_session": previous])
    }

    static func recordings(_ configuration: StudioConfiguration) -> Check {
        guard let directory = configuration.recordDirectory else {
            return Check("recordings", .ok, "recording is off (use --record DIR or `record:` to record the program)")
        }
        var existing = directory
        while !existing.isEmpty, existing != "/", !FileManager.default.fileExists(atPath: existing) {
            existing = (existing as NSString).deletingLastPathComponent
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: existing, isDirectory: &isDirectory), !isDirectory.boolValue {
            return Check("recordings", .problem, "\(directory) cannot be created: \(existing) is a file", fix: "choose another --record directory")
        }
        guard let freeBytes = FreeSpace.bytes(atPath: existing.isEmpty ? "." : existing) else {
            return Check("recordings", .problem, "cannot read free space at \(directory)", fix: "check the path")
        }
        guard FileManager.default.isWritableFile(atPath: existing) else {
            return Check("recordings", .problem, "\(directory) is not writable by this user", fix: "choose another --record directory or fix its owner")
        }
        let free = Double(freeBytes)
        let bytesPerHour = Double(configuration.video.bitRate + configuration.audio.bitRate) / 8 * 3600
        let hours = free / bytesPerHour
        let text = String(format: "%.1f GB free at %@: about %.0f hours of program at %@", free / 1e9, existing, hours,
                          BitRate.describe(configuration.video.bitRate))
        if hours < 1 { return Check("recordings", .problem, text, fix: "free disk space or record elsewhere") }
        if hours < 4 { return Check("recordings", .warning, text, fix: "free disk space before a long show") }
        return Check("recordings", .ok, text)
    }

    /// Whether the destination can be reached, as its kind allows without sending it anything
    /// (`OutputKind.probe`): RTMP a TCP connect to its host and port (1935, or 443 for RTMPS), SRT only
    /// its host's name resolved. The check's area is the kind's name.
    static func reachability(_ output: OutputTarget, timeout: Double) -> Check {
        let masked = output.maskedURL
        let kind = OutputKind.of(output.url) ?? .rtmp
        guard let components = URLComponents(string: output.url), let host = components.host else {
            return Check(kind.name, .problem, "\(output.name): cannot read a host in \(masked)", fix: "use \(kind.example)")
        }
        switch kind.probe {
        case .tcpConnect(let defaultPort):
            let port = components.port ?? defaultPort
            switch TCPProbe.connect(host: host, port: port, timeout: timeout) {
            case .success(let milliseconds):
                return Check(kind.name, .ok, "\(output.name): \(host):\(port) accepts connections (\(milliseconds) ms) for \(masked)")
            case .failure(let error):
                return Check(kind.name, .problem, "\(output.name): \(host):\(port) is not reachable: \(error.message)",
                             fix: "check the URL, the network and that the streaming server runs; studio keeps retrying while it runs")
            }
        case .resolveOnly(let why):
            switch TCPProbe.resolve(host) {
            case .success(let address):
                let resolved = address == host ? host : "\(host) (\(address))"
                return Check(kind.name, .ok, "\(output.name): \(resolved) resolves; not probed further, since \(why): the show's first connection tells, and studio keeps retrying while it runs, for \(masked)")
            case .failure(let error):
                return Check(kind.name, .problem, "\(output.name): \(error.message)", fix: "check the URL's host and the network's name service")
            }
        case .none:
            return Check(kind.name, .ok, "\(output.name): a recording to \(masked) (its disk: see the recordings check)")
        }
    }

    static func devices(matching prefix: String, in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix(prefix) }.sorted { $0.count == $1.count ? $0 < $1 : $0.count < $1.count }
            .map { directory + "/" + $0 }
    }
}

/// A bounded TCP connect, for `studio doctor`.
enum TCPProbe {
    struct Failure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// The first address `host` resolves to, as text.
    static func resolve(_ host: String) -> Result<String, Failure> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, nil, &hints, &list)
        guard resolved == 0, let first = list else {
            return .failure(Failure(message: "cannot resolve \(host): \(String(cString: gai_strerror(resolved)))"))
        }
        defer { freeaddrinfo(list) }
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(first.pointee.ai_addr, first.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return .success(host)
        }
        let length = text.firstIndex(of: 0) ?? text.count
        return .success(String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    static func connect(host: String, port: Int, timeout: Double) -> Result<Int, Failure> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            return .failure(Failure(message: "cannot resolve \(host): \(String(cString: gai_strerror(resolved)))"))
        }
        defer { freeaddrinfo(list) }
        let started = MonotonicClock.now()
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            guard let fd = try? syscall("socket", { socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue), 0) }) else { continue }
            defer { close(fd) }
            do {
                try syscall("connect") { Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) }
                return .success(Int((MonotonicClock.now() - started) / 1_000_000))
            } catch where error.errno == EINPROGRESS {
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let ready = (try? syscall("poll") { poll(&descriptor, 1, Int32(timeout * 1000)) }) ?? 0
                guard ready > 0 else { lastError = "no answer within \(timeout) s"; continue }
                var code: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
                if code == 0 { return .success(Int((MonotonicClock.now() - started) / 1_000_000)) }
                lastError = String(cString: strerror(code))
            } catch {
                lastError = String(cString: strerror(error.errno))
            }
        }
        return .failure(Failure(message: lastError))
    }
}
