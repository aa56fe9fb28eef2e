import Foundation
import Synchronization
import StudioCore
import StudioSystem
import StudioConfig
import Output
import Control

/// Every destination of the program, by name, while the show runs: the config's outputs and `--record`'s
/// program recording from the start, and those the operator adds, stops, starts again and removes
/// mid-show (`studio output`, `POST /api/v1/outputs`), which are not written to the config.
///
/// An output added mid-show joins the fan-out (which hands it the streams' descriptions first) and
/// starts on the encoder's next keyframe, asked for at once; the other outputs see one more keyframe and
/// nothing else. Stopping one takes it out of the fan-out and drains it on a thread of its own
/// (`stop.NAME`, at most `stopBudgetSeconds`), never on a control or media thread.
final class ProgramOutputs: Sendable {
    /// Where an output came from: its start (`config`: `outputs:`/`--rtmp`; `record`: `--record`'s
    /// program recording) or an operator's request mid-show (`added`).
    enum Origin: String, Sendable { case config, record, added }

    struct Entry: Sendable {
        var output: MediaOutput
        var origin: Origin
        /// Who added it (`socket`, `http`), for `added` outputs.
        var addedBy: String?
        /// Stopped (or being stopped) by the operator; kept, ready to start again.
        var stopped = false
        /// A stop or start of it is under way: other changes to it wait for that.
        var changing = false
        /// How often it was started: a recording started again writes its next take, never over the last.
        var takes = 1
        /// Where it first went (a recording's takes are named after it).
        var first: OutputDestination

        init(output: MediaOutput, origin: Origin, addedBy: String? = nil) {
            self.output = output
            self.origin = origin
            self.addedBy = addedBy
            first = output.destination
        }

        /// Where its next start goes: the same URL, or a recording's next take (`NAME-take2.mkv`).
        var nextDestination: OutputDestination {
            guard !first.isNetwork else { return first }
            return OutputDestination(name: first.name, url: RecordingDirectory.take(takes + 1, of: first.url))
        }
    }

    /// The most outputs at once besides `--record`'s program recording (`outputs:`, `--rtmp` and those added).
    static var limit: Int { StudioConfiguration.maxOutputs }
    /// The longest one output's drain may take when it is stopped or removed (as at the server's stop).
    static let stopBudgetSeconds = 5.0

    private struct State {
        var entries: [Entry] = []
        /// The server is stopping: nothing is added or started any more.
        var closed = false
    }

    private let state = Mutex(State())
    private let fanOut: OutputFanOut
    private let events: ServerEventSink
    private let make: @Sendable (OutputDestination) -> MediaOutput
    /// Where `--record` recordings added mid-show go (nil: this server records nowhere).
    private let recordingPath: (@Sendable (String) -> String)?
    private let registerRecording: @Sendable (String) -> Void

    /// - Parameters:
    ///   - make: the output for a destination (with the server's events and keyframe requests).
    ///   - recordingPath: the file of a recording added as NAME, in the recording directory.
    ///   - registerRecording: makes an output's files `recordings` rows (`RecordingRows`).
    init(fanOut: OutputFanOut, events: ServerEventSink, recordingPath: (@Sendable (String) -> String)?,
         registerRecording: @escaping @Sendable (String) -> Void, make: @escaping @Sendable (OutputDestination) -> MediaOutput) {
        self.fanOut = fanOut
        self.events = events
        self.recordingPath = recordingPath
        self.registerRecording = registerRecording
        self.make = make
    }

    var entries: [Entry] { state.withLock { $0.entries } }

    /// An output of the server's start: made, fed and started, with no event (the session's start says it).
    func startAtLaunch(_ destination: OutputDestination, origin: Origin) {
        let output = make(destination)
        if !destination.isNetwork { registerRecording(destination.name) }
        state.withLock { $0.entries.append(Entry(output: output, origin: origin)) }
        fanOut.add(output)
        output.start()
    }

    /// Adds `name`, sending to `url`, or recording the program (`record`) into the recording directory;
    /// it starts on the next keyframe. `output_added` says who asked.
    func add(name: String, url: String?, record: Bool, by requester: String) throws(ControlError) -> Entry {
        let destination = try destination(name: name, url: url, record: record)
        let output = make(destination)
        let entry = Entry(output: output, origin: .added, addedBy: requester)
        try state.withLock { (state: inout State) throws(ControlError) in
            guard !state.closed else { throw ControlError(.unavailable, "the server is stopping") }
            if state.entries.contains(where: { $0.output.destination.name == name }) {
                throw ControlError(.alreadyExists, "an output named \(name) exists already (studio outputs lists them)")
            }
            let counted = state.entries.filter { $0.origin != .record }.count
            guard counted < Self.limit else {
                throw ControlError(.limitReached, "this server already sends to \(Self.limit) outputs, its limit: remove one first (studio output remove NAME)")
            }
            state.entries.append(entry)
        }
        if !destination.isNetwork { registerRecording(name) }
        fanOut.add(output)
        output.start()
        events.emit(StudioEvent(kind: .outputAdded, details: [
            "output": name, "url": destination.maskedURL, "kind": destination.kind.name, "by": requester,
        ]))
        return entry
    }

    /// The destination an `add` asks for, checked: its name, its URL's kind, or the recording directory.
    private func destination(name: String, url: String?, record: Bool) throws(ControlError) -> OutputDestination {
        do { _ = try ValueSyntax.name.parse(name) } catch {
            throw ControlError(.invalidArgument, "output name: \(error.message)")
        }
        switch (url, record) {
        case (nil, false):
            throw ControlError(.invalidArgument, "output \(name): give a URL (\(OutputKind.networkSchemes)) or record: true")
        case (.some, true):
            throw ControlError(.invalidArgument, "output \(name): either a URL or record: true, not both")
        case (nil, true):
            guard let recordingPath else {
                throw ControlError(.invalidArgument, "output \(name): this server records nowhere (start it with --record DIR, or set record in the config)")
            }
            return OutputDestination(name: name, url: recordingPath(name))
        case (let url?, false):
            do { _ = try ValueSyntax.outputURL.parse(url) } catch {
                throw ControlError(.invalidArgument, "output \(name): \(error.message)")
            }
            return OutputDestination(name: name, url: url)
        }
    }

    /// Stops `name` (drained, its file or connection closed); it stays listed, ready to start again.
    /// `done` is called from the stopping thread once it has stopped.
    func stop(_ name: String, by requester: String, done: @escaping @Sendable (Entry) -> Void) throws(ControlError) {
        let entry = try change(name) { (entry: inout Entry) throws(ControlError) in
            guard !entry.stopped else { throw ControlError(.invalidArgument, "output \(name) is stopped already") }
            entry.stopped = true
        }
        drain(entry.output) { [self] in
            let after = finishChange(name)
            events.emit(StudioEvent(kind: .outputStopped, details: ["output": name, "by": requester]))
            done(after ?? entry)
        }
    }

    /// Starts a stopped output again from the next keyframe: a new connection, or a recording's next take
    /// (`...-take2.mkv`: the file it wrote before stays as it is).
    func start(_ name: String, by requester: String) throws(ControlError) -> Entry {
        var fresh: MediaOutput?
        let entry = try change(name) { [make] (entry: inout Entry) throws(ControlError) in
            guard entry.stopped else { throw ControlError(.invalidArgument, "output \(name) is running already") }
            let output = make(entry.nextDestination)
            entry.output = output
            entry.takes += 1
            entry.stopped = false
            fresh = output
        }
        _ = finishChange(name)
        if let fresh {
            fanOut.add(fresh)
            fresh.start()
        }
        events.emit(StudioEvent(kind: .outputStarted, details: ["output": name, "by": requester]))
        return entry
    }

    /// Stops `name` if it runs and forgets it. `done` is called once it has stopped.
    func remove(_ name: String, by requester: String, done: @escaping @Sendable (Entry) -> Void) throws(ControlError) {
        var wasRunning = false
        let entry = try change(name) { (entry: inout Entry) throws(ControlError) in
            wasRunning = !entry.stopped
            entry.stopped = true
        }
        let finish: @Sendable () -> Void = { [self] in
            state.withLock { $0.entries.removeAll { $0.output.destination.name == name } }
            events.emit(StudioEvent(kind: .outputRemoved, details: ["output": name, "url": entry.output.destination.maskedURL, "by": requester]))
            done(entry)
        }
        if wasRunning { drain(entry.output, then: finish) } else { finish() }
    }

    /// Refuses further changes and stops every running output at once (the server's stop: all drain
    /// in parallel with `others`, the ISO files, so the whole stop takes one output's budget).
    func stopAll(with others: [MediaOutput]) {
        let outputs = state.withLock { state -> [MediaOutput] in
            state.closed = true
            return state.entries.filter { !$0.stopped }.map(\.output)
        }
        let stopping = (outputs + others).map { output in
            NamedThread.start(name: "stop.\(output.destination.name)") { output.stop(timeoutSeconds: Self.stopBudgetSeconds) }
        }
        for thread in stopping { thread.join(timeoutSeconds: Self.stopBudgetSeconds + 1) }
    }

    /// Applies `body` to `name`'s entry and marks it changing; errors for an unknown name, a stopping
    /// server or a change under way.
    private func change(_ name: String, _ body: (inout Entry) throws(ControlError) -> Void) throws(ControlError) -> Entry {
        try state.withLock { (state: inout State) throws(ControlError) -> Entry in
            guard !state.closed else { throw ControlError(.unavailable, "the server is stopping") }
            guard let index = state.entries.firstIndex(where: { $0.output.destination.name == name }) else {
                let known = state.entries.map(\.output.destination.name)
                throw ControlError(.notFound, "no output named \(name)" + (known.isEmpty ? " (there are none)" : " (outputs: \(known.joined(separator: ", ")))"))
            }
            guard !state.entries[index].changing else { throw ControlError(.unavailable, "output \(name) is being stopped; try again") }
            try body(&state.entries[index])
            state.entries[index].changing = true
            return state.entries[index]
        }
    }

    private func finishChange(_ name: String) -> Entry? {
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.output.destination.name == name }) else { return nil }
            state.entries[index].changing = false
            return state.entries[index]
        }
    }

    /// Takes `output` out of the fan-out and stops it on its own thread, then runs `then` there.
    private func drain(_ output: MediaOutput, then: @escaping @Sendable () -> Void) {
        fanOut.remove(output)
        _ = NamedThread.start(name: "stop.\(output.destination.name)") {
            output.stop(timeoutSeconds: Self.stopBudgetSeconds)
            then()
        }
    }
}
