import Foundation
import StudioCore
#if canImport(Glibc)
import Glibc
#endif

/// USB webcams and capture cards through /dev/video* capture nodes, hot-plugged through inotify; each
/// camera picks the mode nearest the program, after a pin's size, fps and controls are applied.
public struct V4L2Backend: SourceBackend {
    public init() {}
    public var name: BackendName { .v4l2 }
    public var summary: String { "USB webcams and capture cards through /dev/video* (hot-plugged; MJPEG, YUYV, NV12...)" }
    public var isSelectable: Bool { true }

    public func makeDiscovery(_ context: BackendContext) throws -> (any CameraDiscovery)? {
        let prepare = context.prepare
        return V4L2Discovery(namer: context.namer, program: context.program, log: context.log, prepare: { prepare($0) })
    }

    /// One line per V4L2 node (see `V4L2Doctor.videoDevices`).
    public func doctorChecks(_ context: BackendDoctorContext) -> [DoctorCheck] {
        V4L2Doctor.videoDevices(program: context.program)
    }
}

/// `studio doctor`'s V4L2 lines: each capture node's card, identity, the mode studio would take and
/// who holds a busy one.
public enum V4L2Doctor {
    /// One line per V4L2 capture node (card, identity, the mode studio would take for `program`, busy or
    /// not), one for the nodes that are not cameras (a UVC camera's metadata node, output nodes).
    public static func videoDevices(program: ProgramFormat, devDirectory: String = "/dev") -> [DoctorCheck] {
        let reports = V4L2Discovery.survey(program: program, devDirectory: devDirectory)
        return videoDeviceChecks(reports, program: program) { holders(of: $0) }
    }

    /// The checks for `reports` (separate from the survey so the wording is testable without devices).
    /// `holders` names the processes that have a node open (for a busy node).
    public static func videoDeviceChecks(_ reports: [V4L2NodeReport], program: ProgramFormat,
                                  holders: (String) -> [(pid: Int32, name: String)]) -> [DoctorCheck] {
        guard !reports.isEmpty else {
            return [DoctorCheck("v4l2", .warning, "no V4L2 video devices (/dev/video*)",
                          fix: "plug in a USB camera; test-pattern cameras (`--demo`) work without one")]
        }
        let groupFix = "add the user to the video group: sudo usermod -aG video $USER, then log in again"
        var checks: [DoctorCheck] = []
        var skipped: [String] = []
        for report in reports {
            let path = report.path
            if let error = report.openError {
                checks.append(error.errno == EACCES || error.errno == EPERM
                    ? DoctorCheck("v4l2", .problem, "\(path): no read/write access (\(error))", fix: groupFix, details: ["device": path])
                    : DoctorCheck("v4l2", .problem, "\(path) does not answer (\(error))",
                            fix: "unplug the device and plug it back in; `dmesg` shows what the driver says", details: ["device": path]))
                continue
            }
            if report.capabilities != nil, !report.isVideoCapture {
                skipped.append(path)
                continue
            }
            let card = report.capabilities?.card ?? "?"
            var details = ["device": path, "card": card]
            details["identity"] = report.identity
            var text = "\(path): \(card)"
            if let identity = report.identity { text += " [\(identity)]" }
            if let busy = report.busy {
                let users = holders(path)
                let named = users.map { "\($0.name) (pid \($0.pid))" }.joined(separator: ", ")
                details["busy"] = "true"
                if !users.isEmpty { details["used_by"] = named }
                if let mode = report.bestMode { details["mode"] = describe(mode) }
                if !users.isEmpty, users.allSatisfy({ $0.name == "studio" }) {
                    checks.append(DoctorCheck("v4l2", .ok, "\(text): captured by a running studio (\(named))", details: details))
                } else {
                    let who = users.isEmpty ? "another program (not one of this user's: try sudo fuser -v \(path))" : named
                    checks.append(DoctorCheck("v4l2", .problem, "\(text): busy, \(who) is capturing from it (\(busy))",
                                        fix: "close or stop \(users.isEmpty ? "that program" : named): only one program at a time can capture from a camera (a running studio serve takes it at its next try, within 30 s)",
                                        details: details))
                }
                continue
            }
            if let error = report.modeError {
                checks.append(DoctorCheck("v4l2", .problem, "\(text): cannot read its formats (\(error))",
                                    fix: "unplug the device and plug it back in; `dmesg` shows what the driver says", details: details))
                continue
            }
            guard let mode = report.bestMode else {
                checks.append(DoctorCheck("v4l2", .warning, "\(text): offers no format studio can capture",
                                    fix: "studio takes MJPEG, YUYV, UYVY, NV12, YU12 and RGB/BGR: this device is left out", details: details))
                continue
            }
            details["mode"] = describe(mode)
            text += ": \(describe(mode)) for the \(program.width)x\(program.height)@\(describe(program.frameRate.doubleValue)) program"
            if let fastest = report.bestModeFastestRate, fastest < program.frameRate.doubleValue * 0.97 {
                checks.append(DoctorCheck("v4l2", .warning, text + " (at most \(describe(fastest)) fps at that size: frames are repeated)",
                                    fix: "a smaller program size (e.g. --program 640x360@\(describe(program.frameRate.doubleValue))) or a camera mode that reaches the rate (`studio cameras` lists them)",
                                    details: details))
            } else {
                checks.append(DoctorCheck("v4l2", .ok, text, details: details))
            }
        }
        if !skipped.isEmpty {
            checks.append(DoctorCheck("v4l2", .ok, "\(skipped.count) node(s) skipped, not video capture (metadata or output): \(skipped.joined(separator: ", "))",
                                details: ["skipped": String(skipped.count)]))
        }
        if !reports.contains(where: { $0.isVideoCapture || $0.busy != nil }), reports.allSatisfy({ $0.openError == nil }) {
            checks.append(DoctorCheck("v4l2", .warning, "none of the \(reports.count) V4L2 node(s) is a camera",
                                fix: "plug in a USB camera; test-pattern cameras (`--demo`) work without one"))
        }
        return checks
    }

    /// `YU12 640x360@30`, `MJPG 1280x720@12.5`.
    public static func describe(_ mode: V4L2ModeChoice.Choice) -> String {
        "\(mode.fourcc) \(mode.width)x\(mode.height)@\(mode.frameRate.map { describe($0.doubleValue) } ?? "default")"
    }

    public static func describe(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(format: "%.2f", rate).replacingOccurrences(of: #"0+$"#, with: "", options: .regularExpression)
    }

    /// The processes that have `device` open (from /proc/PID/fd; other users' processes are not
    /// readable unless root).
    public static func holders(of device: String) -> [(pid: Int32, name: String)] {
        let manager = FileManager.default
        let target = URL(fileURLWithPath: device).resolvingSymlinksInPath().path
        var result: [(pid: Int32, name: String)] = []
        for entry in (try? manager.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry) else { continue }
            let fds = (try? manager.contentsOfDirectory(atPath: "/proc/\(entry)/fd")) ?? []
            guard fds.contains(where: { (try? manager.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/\($0)")) == target }) else { continue }
            let name = ((try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
            result.append((pid, name))
        }
        return result.sorted { $0.pid < $1.pid }
    }
}
