#if canImport(Glibc)
import Glibc
#endif

/// The engine library (the package's `StudioEngine` product, `libStudioEngine.so`): the commands that need
/// the media stack (FFmpeg, PipeWire, VAAPI...) run from it, so that `studio` itself maps only what its other
/// commands need and starts in milliseconds. `studio` loads it only for a command whose spec says `engine`,
/// from beside its own binary (a build directory, or /usr/local/bin beside it), else from `../lib/studio/`
/// (an install under a prefix: /usr/local/bin/studio with /usr/local/lib/studio/libStudioEngine.so).
/// Nothing of `studio`'s Swift state crosses over: the library gets argc/argv and runs the command as a
/// program would, through one C entry point per command (`entryPoint(of:)`).
public enum EngineLibrary {
    public static let fileName = "libStudioEngine.so"

    /// The C symbol that runs the engine command `name` (`studio_engine_serve`); each engine command
    /// defines it with `@_cdecl` in StudioEngine.
    public static func entryPoint(of name: String) -> String {
        "studio_engine_" + String(name.map { $0 == "-" ? "_" : $0 })
    }

    /// The paths tried for a binary at `executable`, in order: beside it, then `../lib/studio/`.
    public static func candidates(executable: String) -> [String] {
        func parent(_ path: String) -> String { path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "." }
        let directory = parent(executable)
        return [directory + "/" + fileName, parent(directory) + "/lib/studio/" + fileName]
    }

    /// The running binary's path (`/proc/self/exe`).
    public static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments.first ?? "studio" }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The C entry point of command `name` in the first library among `paths` that exists. A missing
    /// library, one that does not load, or one without the entry is a `ClientFailure` (exit 1) naming the path.
    public static func entry(_ name: String, paths: [String]) throws(ClientFailure)
        -> @convention(c) (Int32, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
        guard let path = paths.first(where: { access($0, F_OK) == 0 }) else {
            throw ClientFailure("`studio \(name)` runs in the engine library \(fileName), which is not installed: looked for "
                                + paths.joined(separator: " and ") + " (install it with the binary: see docs/install.md)")
        }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw ClientFailure("`studio \(name)` cannot load the engine library \(path): \(reason)")
        }
        guard let symbol = dlsym(handle, entryPoint(of: name)) else {
            throw ClientFailure("the engine library \(path) has no `\(name)` (\(entryPoint(of: name))): is it from another version of studio?")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32).self)
    }

    /// Runs engine command `name` with this process's argc/argv (`studio NAME ...`); returns its exit code.
    public static func run(_ name: String, argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) throws(ClientFailure) -> Int32 {
        try entry(name, paths: candidates(executable: executablePath()))(argc, argv)
    }
}
