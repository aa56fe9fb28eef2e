import Foundation
import StudioSystem

/// MJPEG V4L2 cameras for the tests that run inside the VM: the v4l2loopback nodes that
/// `scripts/vm/loopback.sh load N` makes (`/dev/video10` on, labelled `studio-loopback-10`...), each
/// fed by a `pw-virtual-camera --v4l2-output` writer. Until a writer has written its first frame a node
/// is an output node only (no capture device to studio); from then on, until every opener has closed
/// it, it is a capture device offering exactly the writer's MJPG size and rate, as a USB webcam sending
/// MJPEG is.
public enum LoopbackRig {
    /// The card label of every node run.sh makes (followed by the node's number).
    public static let labelPrefix = "studio-loopback-"

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Set by `scripts/vm/test-v4l2.sh`: the loopback suites must run, and fail if the module is missing.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["STUDIO_REQUIRE_LOOPBACK"] == "1" }

    /// The loopback nodes, in number order (`/dev/video10`, ...); empty when the module is not loaded.
    public static func nodes() -> [String] {
        let classDirectory = "/sys/class/video4linux"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: classDirectory)) ?? []
        return names.filter { name in
            let label = (try? String(contentsOfFile: "\(classDirectory)/\(name)/name", encoding: .utf8)) ?? ""
            return label.hasPrefix(labelPrefix)
        }
        .sorted { Int($0.dropFirst("video".count)) ?? 0 < Int($1.dropFirst("video".count)) ?? 0 }
        .map { "/dev/" + $0 }
    }

    /// Loads v4l2loopback as `nodes` nodes (`scripts/vm/loopback.sh load`: root, inside the VM). Each
    /// test loads it and unloads it when done, so the other V4L2 tests see only vivid's nodes.
    public static func load(nodes: Int = 1) throws {
        try script(["load", String(nodes)])
    }

    /// Unloads v4l2loopback (once no writer or reader has a node open).
    public static func unload() {
        try? script(["unload"])
    }

    private static func script(_ arguments: [String]) throws {
        let path = PipeWireRig.repositoryRoot.appendingPathComponent("scripts/vm/loopback.sh").path
        let child = try ChildProcess(executable: path, arguments: arguments)
        let exit = child.wait(timeout: 60)
        guard exit == .exited(0) else {
            if exit == nil { child.stop() }
            throw Failure("""
                scripts/vm/loopback.sh \(arguments.joined(separator: " ")) failed (\(exit.map { "\($0)" } ?? "timed out")): \(child.errorText()) \
                (scripts/setup.sh builds the module for the VM's kernel with DKMS; run inside the VM: scripts/vm/test-v4l2.sh)
                """)
        }
    }

    /// The first loopback node, or an error that says how the VM gets one.
    public static func firstNode() throws -> String {
        guard let node = nodes().first else {
            throw Failure("""
                no v4l2loopback node (\(labelPrefix)*): `LoopbackRig.load()` inside the VM (or scripts/vm/run.sh \
                --loopback 1); scripts/setup.sh builds the module for the VM's kernel with DKMS
                """)
        }
        return node
    }

    /// Starts an MJPEG camera on `node`: `pw-virtual-camera --v4l2-output NODE --camera CAMERA --format
    /// mjpeg --size SIZE --rate RATE` plus `extraArguments` (`--replay N` keeps the writer cheap under
    /// TCG, where each picture it makes costs it about 1.5 s; `--noise N`, `--quality Q`, `--log-frames PATH`, `--corrupt-every N` as for PipeWire cameras),
    /// and waits until it has written its first JPEG (the node is a capture device from then on). The
    /// caller ends it (`stop()`: the node turns back into an output node once nobody has it open).
    public static func startCamera(node: String, camera: String, size: String = "640x360", rate: Int = 30,
                                   extraArguments: [String] = []) throws -> ChildProcess {
        let executable = PipeWireRig.cameraExecutable
        guard FileManager.default.isExecutableFile(atPath: executable) else { throw Failure("no \(executable): build it first") }
        let child = try ChildProcess(executable: executable, arguments: [
            "--v4l2-output", node, "--camera", camera, "--format", "mjpeg", "--size", size, "--rate", String(rate)] + extraArguments)
        // Under TCG a replay loop's encodes take a while before the first frame.
        let deadline = MonotonicClock.now() + 60_000_000_000
        while MonotonicClock.now() < deadline {
            if child.outputText().contains("ready") { return child }
            if child.hasExited { throw Failure("pw-virtual-camera --v4l2-output \(node) exited: \(child.errorText())") }
            MonotonicClock.sleep(seconds: 0.02)
        }
        child.stop()
        throw Failure("pw-virtual-camera --v4l2-output \(node) wrote no frame in 60 s: \(child.errorText())")
    }
}
