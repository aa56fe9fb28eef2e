import Foundation
import Testing
import StudioCLI
import TestSupport

/// `studio` itself maps no media library: `serve` and `doctor` run in the engine library it loads
/// (`EngineLibrary`). These look at the binaries `swift build` made beside the test bundle.
@Suite struct EngineLibraryTests {
    static var products: URL { PipeWireRig.productsDirectory }
    static var studio: String { products.appendingPathComponent("studio").path }
    static var engine: String { products.appendingPathComponent(EngineLibrary.fileName).path }

    /// The libraries the media stack brings (FFmpeg, PipeWire, VAAPI, FreeType, libmicrohttpd, libebur128).
    static let mediaLibraries = ["libavcodec", "libavformat", "libavutil", "libswscale", "libswresample", "libpipewire",
                                 "libva", "libfreetype", "libmicrohttpd", "libebur128", "libx264", "libx265"]

    /// Every shared object the dynamic loader maps for `path` (`ldd`: the whole tree, not only DT_NEEDED).
    static func loadedLibraries(_ path: String) throws -> [String] {
        let ldd = try ChildProcess(executable: "/usr/bin/ldd", arguments: [path])
        #expect(ldd.wait(timeout: 30) == .exited(0), "ldd \(path): \(ldd.errorText())")
        return ldd.outputText().split(separator: "\n").compactMap { line in
            line.split(separator: " ").first.map { String($0.trimmingCharacters(in: .whitespaces)) }
        }
    }

    static func media(_ libraries: [String]) -> [String] {
        libraries.filter { library in mediaLibraries.contains { library.hasPrefix($0 + ".") || library.hasPrefix($0 + "-") } }
    }

    @Test func theStudioBinaryMapsNoMediaLibraryAndTheEngineDoes() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.studio), "build first: swift build")
        let studio = try Self.loadedLibraries(Self.studio)
        #expect(studio.contains { $0.hasPrefix("libsqlite3") }, "\(studio)")
        #expect(Self.media(studio).isEmpty, "studio maps \(Self.media(studio))")
        // The same check finds them in the engine, which needs them.
        let engine = try Self.loadedLibraries(Self.engine)
        #expect(Self.media(engine).contains { $0.hasPrefix("libavcodec") } && Self.media(engine).contains { $0.hasPrefix("libpipewire") },
                "\(engine)")
    }

    @Test func theEngineLibraryHasAnEntryForEachEngineCommand() throws {
        let nm = try ChildProcess(executable: "/usr/bin/nm", arguments: ["-D", "--defined-only", Self.engine])
        #expect(nm.wait(timeout: 30) == .exited(0), "\(nm.errorText())")
        let symbols = Set(nm.outputText().split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) })
        for spec in [ServeCommand.spec, DoctorCommand.spec, TranscodeCommand.spec] {
            #expect(spec.engine)
            #expect(spec.helpText.contains("Runs in the engine library libStudioEngine.so"), "\(spec.helpText)")
            #expect(symbols.contains(EngineLibrary.entryPoint(of: spec.name)), "\(EngineLibrary.entryPoint(of: spec.name)) in \(Self.engine)")
        }
    }

    @Test func itIsFoundBesideTheBinaryThenInLibStudio() {
        #expect(EngineLibrary.candidates(executable: "/usr/local/bin/studio")
            == ["/usr/local/bin/libStudioEngine.so", "/usr/local/lib/studio/libStudioEngine.so"])
        #expect(EngineLibrary.entryPoint(of: "serve") == "studio_engine_serve")
        #expect(!CommandSpec("log", abstract: "", summary: "").helpText.contains("engine library"))
    }

    /// Runs `binary` with `arguments`; its exit and standard error.
    static func run(_ binary: String, _ arguments: [String]) throws -> (ChildProcess.Exit?, String) {
        let child = try ChildProcess(executable: binary, arguments: arguments)
        let exit = child.wait(timeout: 60)
        if exit == nil { child.terminate(signal: SIGKILL) }
        return (exit, child.errorText())
    }

    /// Copies with cp(1), waited for: the copy's write descriptor lives only in that child, so no child
    /// another test spawns meanwhile inherits it (which made exec of the copy fail with ETXTBSY).
    static func copy(_ source: String, to destination: String) throws {
        let cp = try ChildProcess(executable: "/bin/cp", arguments: [source, destination])
        let exit = cp.wait(timeout: 60)
        #expect(exit == .exited(0), "cp \(source) \(destination): \(cp.errorText())")
    }

    @Test func aMissingOrBrokenEngineIsAClearErrorAndTheOtherCommandsStillRun() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-engine-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("bin"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = directory.appendingPathComponent("bin/studio").path
        try Self.copy(Self.studio, to: binary)

        // Missing: both places named, exit 1; a command that does not need it runs.
        let (missing, said) = try Self.run(binary, ["doctor", "--demo"])
        #expect(missing == .exited(1))
        #expect(said.contains("`studio doctor` runs in the engine library libStudioEngine.so, which is not installed: looked for "
                              + "\(directory.path)/bin/libStudioEngine.so and \(directory.path)/lib/studio/libStudioEngine.so"), "\(said)")
        #expect(try Self.run(binary, ["version"]).0 == .exited(0))
        // A usage error is still the parser's (exit 2), found without the engine.
        let (usage, usageText) = try Self.run(binary, ["serve", "--bogus"])
        #expect(usage == .exited(2) && usageText.contains("studio serve: unknown option --bogus"), "\(usageText)")

        // Broken (not a shared object): the path and the loader's reason, exit 1.
        let broken = directory.appendingPathComponent("bin/libStudioEngine.so").path
        try Data("not an ELF file\n".utf8).write(to: URL(fileURLWithPath: broken))
        let (bad, badText) = try Self.run(binary, ["doctor", "--demo"])
        #expect(bad == .exited(1))
        #expect(badText.contains("`studio doctor` cannot load the engine library \(broken): "), "\(badText)")
        try FileManager.default.removeItem(atPath: broken)

        // Installed under a prefix: bin/studio with lib/studio/libStudioEngine.so runs the engine's command.
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("lib/studio"), withIntermediateDirectories: true)
        try Self.copy(Self.engine, to: directory.appendingPathComponent("lib/studio/libStudioEngine.so").path)
        let child = try ChildProcess(executable: binary, arguments: ["doctor", "--demo", "--json", "--db", directory.appendingPathComponent("d.db").path])
        let exit = child.wait(timeout: 120)
        #expect(exit == .exited(0) || exit == .exited(1), "\(child.errorText())")
        #expect(child.outputText().contains("\"checks\""), "\(child.outputText()) \(child.errorText())")
    }
}
