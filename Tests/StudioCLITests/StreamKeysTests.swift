import Foundation
import Testing
@testable import StudioCLI
import StudioEngine
import StudioConfig
import StudioCore
#if canImport(Glibc)
import Glibc
#endif

@Suite struct StreamKeysTests {
    @Test func aVariableInTheURLIsTakenFromTheEnvironment() throws {
        #expect(try StreamKeys.expand("rtmp://h/live/${KEY}", environment: ["KEY": "abc"]) == "rtmp://h/live/abc")
        #expect(try StreamKeys.expand("rtmp://${HOST}/live/${A}-${B}", environment: ["HOST": "h:1935", "A": "x", "B": "y"])
                == "rtmp://h:1935/live/x-y")
        #expect(try StreamKeys.expand("rtmp://h/live/plain", environment: [:]) == "rtmp://h/live/plain")
    }

    @Test func aMissingOrEmptyVariableIsAnErrorThatNamesIt() {
        for environment in [[:], ["KEY": ""]] {
            #expect(throws: ClientFailure.self) { try StreamKeys.expand("rtmp://h/live/${KEY}", environment: environment) }
            do { _ = try StreamKeys.expand("rtmp://h/live/${KEY}", environment: environment) } catch let error as ClientFailure {
                #expect(error.exitCode == 2 && error.message.contains("KEY"), "\(error.message)")
            } catch { Issue.record("unexpected \(error)") }
        }
        #expect(throws: ClientFailure.self) { try StreamKeys.expand("rtmp://h/live/${KEY", environment: ["KEY": "k"]) }
    }

    @Test func serverOptionsExpandTheOutputsOfFlagsAndConfigAlike() throws {
        let spec = CommandSpec("serve", abstract: "", summary: "", options: ServeFlags.options)
        let settings = try ServeFlags.settings(ParsedArguments(["--rtmp", "rtmp://h/live/${STREAM_KEY}"], for: spec))
        let options = try settings.serverOptions(environment: ["STREAM_KEY": "s3cret"])
        #expect(options.configuration.outputs.map(\.url) == ["rtmp://h/live/s3cret"])
        #expect(throws: ClientFailure.self) { try settings.serverOptions(environment: [:]) }
    }

    @Test func onlyKeysWrittenOutOnTheCommandLineAreExposed() throws {
        let spec = CommandSpec("serve", abstract: "", summary: "", options: ServeFlags.options)
        let arguments = try ParsedArguments(["--rtmp", "rtmp://h/live/KEY1", "--rtmp=rtmp://h/live/${K}", "--demo"], for: spec)
        #expect(StreamKeys.exposed(in: arguments) == ["rtmp://h/live/KEY1"])
        #expect(StreamKeys.warning(for: StreamKeys.exposed(in: arguments))?.contains("rtmp://h/live/****") == true)
        #expect(StreamKeys.warning(for: StreamKeys.exposed(in: arguments))?.contains("KEY1") == false)
        #expect(StreamKeys.warning(for: []) == nil)
    }

    @Test func hidingRewritesTheArgumentsInPlace() {
        let words = ["studio", "serve", "--rtmp", "rtmp://h/live/SECRETKEY", "--rtmp=rtmp://u:pw@h/a/K2?t=x", "--demo", "rtmp://h/live/k"]
        let argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: words.count)
        let sizes = words.map { $0.utf8.count + 1 }
        for (index, word) in words.enumerated() { argv[index] = strdup(word) }
        defer {
            for index in words.indices { free(argv[index]) }
            argv.deallocate()
        }
        let hidden = StreamKeys.hide(["rtmp://h/live/SECRETKEY", "rtmp://u:pw@h/a/K2?t=x", "rtmp://h/live/k"], argv: argv, count: words.count)
        #expect(hidden == 3)
        // What /proc/PID/cmdline would show: every byte of each argument, NULs included.
        let bytes = words.indices.map { index in
            String(decoding: (0..<sizes[index]).map { UInt8(bitPattern: argv[index]![$0]) }, as: UTF8.self)
        }
        #expect(bytes.allSatisfy { !$0.contains("SECRETKEY") && !$0.contains("K2") && !$0.contains("pw") && !$0.contains("t=x") }, "\(bytes)")
        #expect(String(cString: argv[3]!) == "rtmp://h/live/****")
        // The masked form is cut to the argument's length (rtmp://****@h/a/****?**** is longer).
        #expect(String(cString: argv[4]!) == "--rtmp=rtmp://****@h/a/****?*")
        #expect(String(cString: argv[6]!) == "rtmp://h/live/*", "a short key is covered within its own bytes")
        #expect(String(cString: argv[1]!) == "serve" && String(cString: argv[5]!) == "--demo", "other arguments stay")
    }
}
