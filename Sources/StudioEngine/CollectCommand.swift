#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StudioCLI
import StudioConfig
import StudioCore
import StudioServer
import StudioSystem
import EventStore
import Control
import StudioViews

/// `studio collect` (declared in StudioCLI's EngineCommands.swift): the node ISO files a switcher's session
/// lists (`node_recordings`, read only from its database) copied here over each node's HTTP API
/// (`NodeCollector`), into `DIR/session-N/NODE/FILE`, a line per file (redrawn in place on a terminal).
@_cdecl("studio_engine_collect")
public func studioEngineCollect(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    EngineMain.run(CollectInEngine.self, argc: argc, argv: argv)
}

enum CollectInEngine: Command {
    static var spec: CommandSpec { CollectCommand.spec }
    private typealias Options = CollectCommand

    static func run(_ arguments: ParsedArguments, environment: [String: String]) throws -> Int32 {
        guard let text = arguments.positionals.first, let sessionID = Int64(text), sessionID > 0 else {
            throw UsageError("studio collect: expected a session id (see `studio sessions`)")
        }
        let store = try ClientLocations.readOnlyHistory(arguments, environment, command: "collect")
        defer { store.close() }
        guard let session = try store.session(id: sessionID), session.id == sessionID else {
            throw ClientFailure("studio collect: the database \(store.path) has no session \(sessionID) (see `studio sessions`)")
        }
        let nodes = try store.nodeSessions(sessionID: sessionID)
        guard !nodes.isEmpty else {
            throw ClientFailure("studio collect: session \(sessionID) knows no capture node's files (see `studio recordings \(sessionID)`)")
        }
        let entries = try nodeEntries(arguments, snapshot: session.configSnapshot)
        let folder = ((arguments.value(Options.to.name) ?? ".") as NSString).appendingPathComponent("session-\(sessionID)")
        let terminal = isatty(1) == 1
        var failures = 0
        for node in nodes {
            let files = node.recordings.filter { $0.kind == "iso" }
            guard !files.isEmpty else {
                writeIgnoringErrors(1, "node \(node.node): no ISO files known (\(node.state.rawValue)\(node.reason.map { ": \($0)" } ?? ""))\n")
                continue
            }
            let collector: NodeCollector
            do {
                collector = try NodeCollector(node: entries[node.node] ?? SRTListenerSpec.Node(name: node.node))
            } catch {
                writeStandardError("studio collect: \(error.message)\n")
                failures += files.count
                continue
            }
            let directory = (folder as NSString).appendingPathComponent(node.node)
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                throw ClientFailure("studio collect: cannot make \(directory): \(error.localizedDescription)")
            }
            for file in files {
                let name = (file.path as NSString).lastPathComponent
                let destination = (directory as NSString).appendingPathComponent(name)
                let line = FileLine(label: "\(node.node)/\(file.camera) \(name)", terminal: terminal)
                do {
                    let outcome = try collector.collect(name, session: file.nodeSession, into: destination, progress: line.show)
                    var how = outcome.resumedFrom == outcome.bytes ? "already here" : outcome.resumedFrom > 0
                        ? "resumed from \(ByteCount.text(Int(outcome.resumedFrom)))" : "copied"
                    if outcome.refetched { how += ", fetched again whole after a mismatch" }
                    line.end("\(destination): \(ByteCount.text(Int(outcome.bytes))), \(how), sha256 \(outcome.sha256) matches")
                } catch {
                    line.end(nil)
                    writeStandardError("studio collect: \(node.node)/\(file.camera) \(name): \(error.message)\n")
                    failures += 1
                }
            }
        }
        return failures == 0 ? 0 : 1
    }

    /// Each node's entry: the switcher's config (`--config`) when given, else the session's snapshot (its
    /// `api`; tokens never reach the database).
    private static func nodeEntries(_ arguments: ParsedArguments, snapshot: String) throws -> [String: SRTListenerSpec.Node] {
        if let file = arguments.value(Options.config.name) {
            let configuration: StudioConfiguration
            do { configuration = try StudioConfiguration.load(path: file) } catch {
                throw ClientFailure("studio collect: --config \(file): \(error)")
            }
            return Dictionary((configuration.network.srt?.nodes ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
        var entries: [String: SRTListenerSpec.Node] = [:]
        for (name, api) in History.nodeAPIs(snapshot: snapshot) {
            if let address = try? ValueSyntax<ListenAddress>.nodeHTTP.parse(api) { entries[name] = SRTListenerSpec.Node(name: name, api: address) }
        }
        return entries
    }
}

/// A file's line: on a terminal redrawn in place (at most ten times a second), otherwise a line when
/// the copy starts and one when it ends.
private final class FileLine {
    private let label: String
    private let terminal: Bool
    private var lastDraw: UInt64 = 0
    private var started = false

    init(label: String, terminal: Bool) {
        self.label = label
        self.terminal = terminal
    }

    func show(_ done: Int64, _ total: Int64) {
        let percent = total > 0 ? Int(done * 100 / total) : 100
        let text = "\(label): \(ByteCount.text(Int(done))) of \(ByteCount.text(Int(total))) (\(percent)%)"
        if terminal {
            let now = MonotonicClock.now()
            guard now - lastDraw >= 100_000_000 || done == total else { return }
            lastDraw = now
            writeIgnoringErrors(1, "\r\u{1B}[K" + text)
        } else if !started {
            writeIgnoringErrors(1, text + "\n")
        }
        started = true
    }

    /// The file's last line (`summary`), or the end of its bar when it failed (nil).
    func end(_ summary: String?) {
        if terminal && started { writeIgnoringErrors(1, "\r\u{1B}[K") }
        if let summary { writeIgnoringErrors(1, "\(label): \(summary)\n") }
    }
}
