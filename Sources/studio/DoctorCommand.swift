import Foundation
import StudioServer
import Control
import StudioCLI

/// `studio doctor`: checks the machine for the server that `studio serve` with the same options would run.
enum DoctorCommand: Command {
    static let spec = CommandSpec(
        "doctor", abstract: "what this machine offers a studio, and what is wrong.",
        summary: "check this machine: cameras, GPU, groups, encoders and their speed,\ndisk, database, RTMP destinations (takes the serve options)",
        options: [.json] + ServeFlags.options,
        discussion: """
        Takes the same options as `studio serve` and checks the setup that serve would run: each V4L2
        camera (card, identity, the mode it would capture for the program, access, and which program
        holds it when busy; metadata/output nodes counted as skipped), the PipeWire socket, GPU render nodes, video/render group membership,
        FFmpeg encoders (libx264, aac, h264_vaapi), how fast the program encoder (x264 with the program's
        preset and bit rate, or VAAPI) encodes the program format here (half a second on camera-like
        pictures; a warning below 1.25 times the program's rate), the database path, free disk for recordings, and a
        TCP connect to each RTMP destination (stream keys masked). Each line is OK, WARNING or PROBLEM
        with what to do. Exits 1 when there is a problem.
        """)

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        let options = try ServeFlags.settings(arguments).serverOptions(environment: environment)
        let checks = Doctor.run(options, environment: environment)
        let problems = checks.filter { $0.status == .problem }.count
        let warnings = checks.filter { $0.status == .warning }.count
        if arguments.flag("json") {
            let list: [JSONValue] = checks.map { check in
                .object(["area": .string(check.area), "status": .string(check.status.rawValue),
                         "message": .string(check.message), "fix": check.fix.map(JSONValue.string) ?? .null,
                         "details": .object(check.details.mapValues(JSONValue.string))])
            }
            print(JSONValue.object(["checks": .array(list), "problems": .int(problems), "warnings": .int(warnings)]).jsonText)
        } else {
            for check in checks {
                print("\(check.status.rawValue.uppercased().padding(toLength: 8, withPad: " ", startingAt: 0))\(check.area.padding(toLength: 11, withPad: " ", startingAt: 0))\(check.message)")
                if let fix = check.fix, check.status != .ok { print(String(repeating: " ", count: 19) + "-> " + fix) }
            }
            print("\n\(problems) problem(s), \(warnings) warning(s)")
        }
        return problems > 0 ? 1 : 0
    }
}
