// EmbedMigrations: a build-tool plugin that compiles the SQL files in `migrations/` (at the package root)
// into the target it is applied to, as a generated `EmbeddedMigrations.swift` defining
// `embeddedMigrations: [EmbeddedMigration]` (the target defines `EmbeddedMigration`).
// The work is done by the `embed-migrations` executable of this package; every .sql file is an input of the
// build command, so changing a migration regenerates the file.
//
// `Plugins/EmbedMigrations/migrations` is a symlink to `../../migrations` on purpose: SwiftPM re-plans the build
// (and so re-runs this plugin) only when the file structure of a target's directory changes, and
// `migrations/` belongs to no target. Through the symlink, adding, renaming or removing a migration changes
// this plugin's directory structure, so the command's list of inputs never goes stale. Don't remove it.
import Foundation
import PackagePlugin

@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "migrations", directoryHint: .isDirectory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false))
        let inputs = names.filter { $0.hasSuffix(".sql") }.sorted().map { directory.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) SQL migration(s) into \(target.name)",
                executable: try context.tool(named: "embed-migrations").url,
                arguments: [output.path(percentEncoded: false)] + inputs.map { $0.path(percentEncoded: false) },
                inputFiles: [directory] + inputs,
                outputFiles: [output]),
        ]
    }
}
