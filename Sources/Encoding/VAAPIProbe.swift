import CVA
import Foundation
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// An H.264 profile a VAAPI driver can encode.
public enum H264EncodeProfile: String, Sendable, Hashable, CaseIterable {
    case constrainedBaseline = "constrained_baseline"
    case main
    case high

    var vaProfile: VAProfile {
        switch self {
        case .constrainedBaseline: VAProfileH264ConstrainedBaseline
        case .main: VAProfileH264Main
        case .high: VAProfileH264High
        }
    }
}

/// A render node whose driver encodes H.264.
public struct VAAPIDevice: Sendable, Hashable {
    /// `/dev/dri/renderD128`...
    public var renderNode: String
    /// The driver's vendor string (`Intel iHD driver ...`, `Mesa Gallium driver ...`).
    public var driver: String
    /// The H.264 profiles with an encode entrypoint.
    public var profiles: [H264EncodeProfile]
    /// True when only the low-power entrypoint (VAEntrypointEncSliceLP) encodes H.264: the encoder must
    /// then be opened with `low_power` (some Intel generations have no full-power H.264 encoder).
    public var lowPower: Bool

    public init(renderNode: String, driver: String, profiles: [H264EncodeProfile], lowPower: Bool) {
        self.renderNode = renderNode
        self.driver = driver
        self.profiles = profiles
        self.lowPower = lowPower
    }
}

/// Why VAAPI cannot encode here.
public enum VAAPIUnavailableReason: Sendable, Hashable {
    /// No `/dev/dri/renderD*` (no GPU, or the container/VM does not pass it through), or the given node does not exist.
    case noRenderNode
    /// The node exists but this user may not open it.
    case permissionDenied
    /// Opening the node or initializing libva failed (the text says which call and why).
    case initFailed(String)
    /// The driver (named) initialized but offers no H.264 encode entrypoint.
    case noH264Encode(driver: String)
}

/// A probe that found nothing usable: where it looked and why it failed, with a human text.
public struct VAAPIProbeFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The node probed, nil when there was none to probe.
    public var renderNode: String?
    public var reason: VAAPIUnavailableReason

    public init(renderNode: String?, reason: VAAPIUnavailableReason) {
        self.renderNode = renderNode
        self.reason = reason
    }

    /// One sentence for logs, events and `studio doctor`.
    public var description: String {
        let node = renderNode ?? "/dev/dri/renderD*"
        switch reason {
        case .noRenderNode:
            return renderNode == nil
                ? "no VAAPI render node (/dev/dri/renderD* is missing: no GPU, or it is not passed through to this machine)"
                : "no VAAPI render node at \(node)"
        case .permissionDenied:
            return "permission denied opening the render node \(node): the user must be in the `render` group "
                + "(sudo usermod -aG render $USER, then log out and in again)"
        case .initFailed(let text):
            return "VAAPI initialization failed on \(node): \(text)"
        case .noH264Encode(let driver):
            return "the VAAPI driver on \(node) (\(driver)) has no H.264 encode entrypoint"
        }
    }
}

/// What probing found.
public enum VAAPIProbeResult: Sendable, Hashable {
    case usable(VAAPIDevice)
    case unusable(VAAPIProbeFailure)

    public var device: VAAPIDevice? { if case .usable(let device) = self { device } else { nil } }
    public var failure: VAAPIProbeFailure? { if case .unusable(let failure) = self { failure } else { nil } }
}

/// Finds render nodes and asks libva, through each node's DRM display, whether its driver encodes H.264.
/// Cheap (no encoder is opened) and side-effect free: every display and descriptor is released.
public enum VAAPIProbe {
    /// The render nodes (`/dev/dri/renderD*`), sorted.
    public static func renderNodes(in directory: String = "/dev/dri") -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var nodes: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("renderD") { nodes.append(directory + "/" + name) }
        }
        return nodes.sorted()
    }

    /// Probes every render node; returns the first usable one, else the first node's failure
    /// (`.noRenderNode` when there is none).
    public static func probe() -> VAAPIProbeResult {
        var firstFailure: VAAPIProbeResult?
        for node in renderNodes() {
            let result = probe(renderNode: node)
            if result.device != nil { return result }
            if firstFailure == nil { firstFailure = result }
        }
        return firstFailure ?? .unusable(VAAPIProbeFailure(renderNode: nil, reason: .noRenderNode))
    }

    /// Opens `renderNode`, initializes libva on it and looks for an H.264 encode entrypoint
    /// (VAEntrypointEncSlice, else VAEntrypointEncSliceLP) for Constrained Baseline, Main and High.
    public static func probe(renderNode: String) -> VAAPIProbeResult {
        func failed(_ reason: VAAPIUnavailableReason) -> VAAPIProbeResult {
            .unusable(VAAPIProbeFailure(renderNode: renderNode, reason: reason))
        }
        let display: VADRMDisplay
        do {
            display = try VADRMDisplay(renderNode: renderNode)
        } catch let error as SystemError {
            switch error.errno {
            case EACCES, EPERM: return failed(.permissionDenied)
            case ENOENT, ENODEV, ENXIO, ENOTDIR: return failed(.noRenderNode)
            default: return failed(.initFailed(error.description))
            }
        } catch {
            return failed(.initFailed(String(describing: error)))
        }
        let driver = display.vendor
        let profiles = display.profiles()
        var full: [H264EncodeProfile] = []
        var lowPowerOnly: [H264EncodeProfile] = []
        for profile in H264EncodeProfile.allCases where profiles.contains(profile.vaProfile) {
            let entrypoints = display.entrypoints(for: profile.vaProfile)
            if entrypoints.contains(VAEntrypointEncSlice) { full.append(profile) }
            else if entrypoints.contains(VAEntrypointEncSliceLP) { lowPowerOnly.append(profile) }
        }
        // Prefer the full-power entrypoint; fall back to low power only when that is all there is.
        if !full.isEmpty {
            return .usable(VAAPIDevice(renderNode: renderNode, driver: driver, profiles: full, lowPower: false))
        }
        if !lowPowerOnly.isEmpty {
            return .usable(VAAPIDevice(renderNode: renderNode, driver: driver, profiles: lowPowerOnly, lowPower: true))
        }
        return failed(.noH264Encode(driver: driver))
    }
}

/// A failed libva call: its name and what went wrong (vaErrorStr's text and the status, plus the last
/// message libva logged, which usually names the driver that failed to load).
struct VAError: Error, CustomStringConvertible {
    let call: String
    let message: String

    init(call: String, message: String) {
        self.call = call
        self.message = message
    }

    init(call: String, status: VAStatus, logged: String?) {
        var message = "\(String(cString: vaErrorStr(status))) (VAStatus \(status))"
        if let logged { message += "; libva: \(logged)" }
        self.init(call: call, message: message)
    }

    var description: String { "\(call): \(message)" }
}

/// libva's error lines during one probe. libva calls its message callback synchronously, on the thread
/// making the libva call (the prober's), so this is only ever touched by that thread.
private final class VAMessages {
    var last: String?
}

/// libva's error callback: copies the line into the probe's `VAMessages`.
private let recordVAMessage: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void = { context, message in
    guard let context, let message else { return }
    let text = String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
    Unmanaged<VAMessages>.fromOpaque(context).takeUnretainedValue().last = text
}

/// A render node's descriptor and the initialized libva display on it. Owns both: `deinit` terminates
/// the display, then closes the descriptor. Used on one thread (the prober's).
final class VADRMDisplay {
    let fd: Int32
    let display: VADisplay
    /// Retained for as long as the display may call `recordVAMessage` with it.
    private let messages: VAMessages

    /// Opens `renderNode` read-write (throws the open's `SystemError`, so EACCES stays visible) and
    /// initializes libva on it (throws `VAError`).
    init(renderNode: String) throws {
        let fd = try syscall("open(\(renderNode))") { open(renderNode, O_RDWR | O_CLOEXEC) }
        guard let display = vaGetDisplayDRM(fd) else {
            _ = try? syscall("close") { close(fd) }
            throw VAError(call: "vaGetDisplayDRM(\(renderNode))", message: "not a DRM device")
        }
        // libva prints "libva info: ..." to stdout and errors to stderr by default; the probe reports
        // through its result instead, with libva's last error line in the text.
        let messages = VAMessages()
        vaSetInfoCallback(display, nil, nil)
        vaSetErrorCallback(display, recordVAMessage, Unmanaged.passUnretained(messages).toOpaque())
        var major: Int32 = 0
        var minor: Int32 = 0
        let status = vaInitialize(display, &major, &minor)
        guard status == VA_STATUS_SUCCESS else {
            // vaTerminate also frees a display that failed to initialize.
            vaTerminate(display)
            _ = try? syscall("close") { close(fd) }
            withExtendedLifetime(messages) {}
            throw VAError(call: "vaInitialize(\(renderNode))", status: status, logged: messages.last)
        }
        self.fd = fd
        self.display = display
        self.messages = messages
    }

    deinit {
        vaTerminate(display)
        _ = try? syscall("close") { close(fd) }
    }

    var vendor: String {
        guard let text = vaQueryVendorString(display) else { return "unknown driver" }
        return String(cString: text)
    }

    func profiles() -> [VAProfile] {
        var list = [VAProfile](repeating: VAProfileNone, count: Int(max(0, vaMaxNumProfiles(display))))
        var count: Int32 = 0
        guard !list.isEmpty, vaQueryConfigProfiles(display, &list, &count) == VA_STATUS_SUCCESS else { return [] }
        return Array(list.prefix(Int(count)))
    }

    func entrypoints(for profile: VAProfile) -> [VAEntrypoint] {
        var list = [VAEntrypoint](repeating: VAEntrypoint(0), count: Int(max(0, vaMaxNumEntrypoints(display))))
        var count: Int32 = 0
        guard !list.isEmpty, vaQueryConfigEntrypoints(display, profile, &list, &count) == VA_STATUS_SUCCESS else { return [] }
        return Array(list.prefix(Int(count)))
    }
}
