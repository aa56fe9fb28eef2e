import Foundation
import StudioSystem

/// What the tests that run inside the VM (`scripts/vm/test-v4l2.sh`) do to the vivid driver and to
/// /dev: commands (v4l2-ctl), sysfs writes (unbind/bind), and the /dev/v4l/by-id links that udev would
/// make on a real machine (the VM has no udev; its /dev is a writable devtmpfs).
public enum VividRig {
    /// Runs a command found on PATH (v4l2-ctl...) and returns its exit status.
    @discardableResult
    public static func run(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    public static func sysfs(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// Removes every vivid node at once (as unplugging both cameras would); `bind()` brings them back
    /// with the same numbers, reset to their defaults.
    public static func unbind() throws { try sysfs("vivid.0", to: "/sys/bus/platform/drivers/vivid/unbind") }
    public static func bind() throws { try sysfs("vivid.0", to: "/sys/bus/platform/drivers/vivid/bind") }

    public static let byIDDirectory = "/dev/v4l/by-id"

    /// Makes `/dev/v4l/by-id/NAME -> ../../NODE` (NODE e.g. `video0`) as udev would, replacing a link of
    /// that name. The target need not exist yet (udev's links dangle for a moment too).
    public static func makeByIDLink(_ name: String, to node: String) throws {
        try FileManager.default.createDirectory(atPath: byIDDirectory, withIntermediateDirectories: true)
        let link = byIDDirectory + "/" + name
        try? FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "../../" + node)
    }

    public static func removeByIDLink(_ name: String) throws {
        try FileManager.default.removeItem(atPath: byIDDirectory + "/" + name)
    }

    /// Removes /dev/v4l with every link in it (udev removes the directories with the last camera), so
    /// the next test sees vivid as the rig made it.
    public static func removeByIDDirectory() {
        try? FileManager.default.removeItem(atPath: "/dev/v4l")
    }

    /// A by-id name shaped as udev makes them for a USB camera.
    public static func byIDName(serial: String) -> String { "usb-Studio_Test_Cam_\(serial)-video-index0" }
}
