import Foundation
import Testing

/// The `studio` binary's command line: every command in the overview has its help, the usage
/// errors exit 2 and name the command.
@Suite struct CLITests {
    @Test func everyListedCommandHasItsHelp() throws {
        let studio = try StudioHarness()
        let overview = try studio.run(["--help"])
        #expect(overview.status == 0 && overview.output.contains("USAGE"), "\(overview)")
        let names = overview.output.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  studio ") else { return nil }
            return line.dropFirst("  studio ".count).split(separator: " ").first.map(String.init)
        }
        #expect(names == ["serve", "cameras", "switch", "preview", "cut", "auto", "transition", "scene", "scenes", "overlay", "camera", "controls",
                          "control", "focus", "picture", "play", "pause", "stop", "cue", "seek", "next", "audio", "status", "outputs", "output", "metrics", "reload", "sessions", "log", "onair", "report", "export", "recordings",
                          "prune", "watch", "doctor", "transcode", "collect"])
        for name in names + ["help", "version"] {
            let help = try studio.run([name, "--help"])
            #expect(help.status == 0 && help.output.hasPrefix("studio \(name) — ") && help.output.contains("USAGE\n  studio \(name)"), "\(help)")
            #expect(try studio.run(["help", name]).output == help.output)
        }
        #expect(try studio.run([]).status == 2)
        #expect(try studio.run(["version"]).output == "studio 0.1.0\n")
        #expect(try studio.run(["--version"]).output == "studio 0.1.0\n")
    }

    @Test func usageErrorsExit2AndNameTheCommand() throws {
        let studio = try StudioHarness()
        let cases: [([String], String)] = [
            (["bogus"], "studio: unknown command \"bogus\""),
            (["switch"], "studio switch: expected one camera or scene name"),
            (["overlay"], "studio overlay: expected an overlay name and optionally on or off"),
            (["overlay", "logo", "maybe"], "studio overlay: on|off maybe: expected true or false"),
            (["auto", "fade"], "studio auto: TRANSITION fade: expected a transition (cut, mix, dip, wipe-left"),
            (["transition", "mix", "--frames", "0"], "studio transition: --frames 0: expected a number of frames"),
            (["status", "extra"], "studio status: unexpected argument extra"),
            (["log", "x"], "studio log: x is not a session id"),
            (["sessions", "--limit", "0"], "studio sessions: --limit 0: expected a positive number"),
            (["control", "cam1", "brightness"], "studio control: expected a camera and NAME=VALUE"),
            (["picture", "cam1", "--crop", "1,2"], "studio picture: --crop 1,2: expected X,Y,W,H in fractions of the picture"),
            (["picture", "cam1", "--beauty", "lots"], "studio picture: --beauty lots: expected a whole number"),
            (["serve", "--bitrate", "200M"], "studio serve: --bitrate 200M: 200M bit/s is outside the range 100k to 100M"),
            (["doctor", "--audio", "mic"], "studio doctor: --audio mic: expected tone, silence, pipewire"),
            (["serve", "--rtmp", "rtmp://host-only-SECRETKEY"], "studio serve: --rtmp: expected rtmp://host/app/stream-key"),
            (["serve", "--demo=yes"], "studio serve: --demo takes no value"),
            (["watch", "--socket"], "studio watch: --socket needs a value"),
        ]
        for (words, start) in cases {
            let result = try studio.run(words)
            #expect(result.status == 2 && result.error.hasPrefix(start), "\(words): \(result)")
            #expect(!result.error.contains("SECRETKEY"))
        }
    }
}
