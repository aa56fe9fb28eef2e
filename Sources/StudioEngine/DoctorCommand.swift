import Foundation
import StudioServer
import Control
import StudioCLI

/// `studio doctor` (declared in StudioCLI's EngineCommands.swift): checks the machine for the server that
/// `studio serve` with the same options would run.
@_cdecl("studio_engine_doctor")
public func studioEngineDoctor(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    EngineMain.run(DoctorInEngine.self, argc: argc, argv: argv)
}

enum DoctorInEngine: Command {
    static var spec: CommandSpec { DoctorCommand.spec }

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
