// EmbedWebConsole: a build-tool plugin that compiles the operator's console page, the files in `web/` (at
// the package root), into the target it is applied to, as a generated `EmbeddedWebFiles.swift` defining
// `embeddedWebFiles: [EmbeddedWebFile]` (the target defines `EmbeddedWebFile`), so the `studio` binary
// serves its page without reading files at run time. The work is done by this package's `embed-web`.
//
// `Plugins/EmbedWebConsole/web` is a symlink to `../../web` for the reason EmbedMigrations has its
// `migrations` symlink: adding or removing a file there then re-plans the build. Don't remove it.
import Foundation
import PackagePlugin

@main
struct EmbedWebConsole: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "web", directoryHint: .isDirectory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false))
        let inputs = names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedWebFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) console file(s) into \(target.name)",
                executable: try context.tool(named: "embed-web").url,
                arguments: [output.path(percentEncoded: false)] + inputs.map { $0.path(percentEncoded: false) },
                inputFiles: [directory] + inputs,
                outputFiles: [output]),
        ]
    }
}
