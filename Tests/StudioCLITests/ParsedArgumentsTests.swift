import Testing
@testable import StudioCLI

@Suite struct ParsedArgumentsTests {
    static let spec = CommandSpec("demo-cmd", abstract: "a command for tests.", summary: "tests",
                                  positionals: [PositionalSpec("NAME"), PositionalSpec("EXTRA", optional: true)],
                                  options: [OptionSpec("size", "WxH", help: "a size"), OptionSpec("url", "URL", repeatable: true, help: "urls"),
                                            .json])

    static func failure(_ words: [String], _ spec: CommandSpec = spec) -> String? {
        do {
            _ = try ParsedArguments(words, for: spec)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func valuesSwitchesAndPositionals() throws {
        let parsed = try ParsedArguments(["cam1", "--size", "640x360", "--json", "--url=rtmp://a/b/c", "--url", "rtmp://d/e/f", "--size=1280x720"],
                                         for: Self.spec)
        #expect(parsed.positionals == ["cam1"])
        #expect(parsed.value("size") == "1280x720", "the last value counts")
        #expect(parsed.values("url") == ["rtmp://a/b/c", "rtmp://d/e/f"])
        #expect(parsed.flag("json") && !parsed.flag("size"))
        #expect(parsed.value("url") == "rtmp://d/e/f")
        // After `--` everything is positional; a negative number is a positional too.
        #expect(try ParsedArguments(["--", "--json"], for: Self.spec).positionals == ["--json"])
        #expect(try ParsedArguments(["-5"], for: Self.spec).positionals == ["-5"])
    }

    @Test func undeclaredOrMalformedOptionsNameTheCommand() {
        #expect(Self.failure(["x", "--bogus"]) == "studio demo-cmd: unknown option --bogus (see `studio demo-cmd --help`)")
        #expect(Self.failure(["x", "-q"]) == "studio demo-cmd: unknown option -q (see `studio demo-cmd --help`)")
        #expect(Self.failure(["x", "--size"]) == "studio demo-cmd: --size needs a value")
        #expect(Self.failure(["x", "--json=yes"]) == "studio demo-cmd: --json takes no value")
    }

    @Test func positionalsMustFitTheDeclaration() {
        #expect(Self.failure([]) == "studio demo-cmd: expected NAME [EXTRA] (see `studio demo-cmd --help`)")
        #expect(Self.failure(["a", "b", "c"]) == "studio demo-cmd: unexpected argument c (see `studio demo-cmd --help`)")
        var custom = Self.spec
        custom.positionalsError = "expected one camera name"
        #expect(Self.failure(["a", "b", "c"], custom) == "studio demo-cmd: expected one camera name")
        #expect(Self.failure(["a"], custom) == nil)
    }

    @Test func typedValuesNameTheOptionAndMaskURLs() throws {
        let parsed = try ParsedArguments(["x", "--url", "http://host/app/SECRETKEY", "--size", "0"], for: Self.spec)
        #expect(throws: UsageError.self) { try parsed.parseAll("url", .outputURL) }
        do {
            _ = try parsed.parseAll("url", .outputURL)
        } catch {
            #expect(error.message == "studio demo-cmd: --url: expected an rtmp://, rtmps:// or srt:// URL, got \"http://host/app/****\"")
            #expect(!error.message.contains("SECRETKEY"))
        }
        #expect(try ParsedArguments(["x"], for: Self.spec).parse("size", .evenSize) == nil)
    }

    @Test func helpListsEveryOptionWithItsHelp() {
        let help = Self.spec.helpText
        #expect(help.hasPrefix("studio demo-cmd — a command for tests.\n\nUSAGE\n  studio demo-cmd NAME [EXTRA] [--size WxH] [--url URL]... [--json]"))
        for option in Self.spec.options {
            #expect(help.contains("  --\(option.name)"), "\(option.name)")
            #expect(help.contains(option.help), "\(option.name)")
        }
    }

    @Test func overviewListsListedCommandsOnly() {
        let hidden = CommandSpec("secret", abstract: "x", summary: "not shown", listed: false)
        let text = CommandSpec.overview([Self.spec, hidden], header: "HEAD", footer: "FOOT")
        #expect(text.hasPrefix("HEAD\n\nUSAGE\n  studio demo-cmd NAME [EXTRA] [--size WxH] [--url URL]... [--json]"))
        #expect(text.contains("tests") && !text.contains("secret") && text.hasSuffix("\n\nFOOT"))
    }
}
