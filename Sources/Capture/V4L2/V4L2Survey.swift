import StudioCore
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// One `/dev/video*` node as `studio doctor` describes it: what it is, the mode studio would capture
/// for a program, and whether another program holds it.
public struct V4L2NodeReport: Sendable {
    public var path: String
    /// Nil when the node could not be opened (see `openError`, or `busy` for EBUSY).
    public var capabilities: V4L2Capabilities?
    public var openError: SystemError?
    /// For capture nodes: the identity the discovery would give it (by-id when there is a link).
    public var identity: String?
    /// For capture nodes: the mode chosen for the program (nil: nothing studio can capture).
    public var bestMode: V4L2ModeChoice.Choice?
    /// The fastest rate the best mode's format and size offer.
    public var bestModeFastestRate: Double?
    /// EBUSY from `open` or `VIDIOC_REQBUFS`: another program is capturing from the node.
    public var busy: SystemError?
    /// An error while reading the node's formats.
    public var modeError: SystemError?

    public init(path: String, capabilities: V4L2Capabilities? = nil, openError: SystemError? = nil, identity: String? = nil,
                bestMode: V4L2ModeChoice.Choice? = nil, bestModeFastestRate: Double? = nil, busy: SystemError? = nil,
                modeError: SystemError? = nil) {
        self.path = path
        self.capabilities = capabilities
        self.openError = openError
        self.identity = identity
        self.bestMode = bestMode
        self.bestModeFastestRate = bestModeFastestRate
        self.busy = busy
        self.modeError = modeError
    }

    public var isVideoCapture: Bool { capabilities?.isVideoCapture == true }
}

extension V4L2Discovery {
    /// Every `/dev/videoN` node (numeric order) with what it is and, for capture nodes, identity, the
    /// mode nearest `program` and whether it is busy. Changes nothing on the devices: the busy check is
    /// `VIDIOC_REQBUFS` with count 0, which frees this file's (absent) buffers and fails with EBUSY
    /// when another file descriptor owns the capture queue.
    public static func survey(program: ProgramFormat = .default, devDirectory: String = "/dev") -> [V4L2NodeReport] {
        videoNodeNames(in: devDirectory).map { name in
            let path = devDirectory + "/" + name
            var report = V4L2NodeReport(path: path)
            let device: V4L2Device
            do throws(SystemError) {
                device = try V4L2Device(path: path)
            } catch {
                if error.errno == EBUSY { report.busy = error } else { report.openError = error }
                return report
            }
            defer { device.close() }
            do throws(SystemError) {
                report.capabilities = try device.capabilities()
            } catch {
                report.openError = error
                return report
            }
            guard let capabilities = report.capabilities, capabilities.isVideoCapture else { return report }
            report.identity = identity(path: path, capabilities: capabilities, byIDDirectory: devDirectory + "/v4l/by-id")
            do throws(SystemError) {
                let modes = try device.offeredModes(near: program)
                if let best = V4L2ModeChoice.best(modes, for: program) {
                    report.bestMode = best
                    report.bestModeFastestRate = modes.first { $0.fourcc == best.fourcc && $0.width == best.width && $0.height == best.height }?.rates.fastest
                }
            } catch {
                report.modeError = error
            }
            do throws(SystemError) {
                _ = try device.requestBuffers(0)
            } catch where error.errno == EBUSY {
                report.busy = error
            } catch {
                // A driver without MMAP streaming says so here; the capture node check already passed.
            }
            return report
        }
    }
}
