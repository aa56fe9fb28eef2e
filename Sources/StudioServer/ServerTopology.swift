import Foundation
import StudioCore
import Capture
import Encoding
import Output
import IsoRecording

extension StudioServer {
    /// The running pipeline as a graph (see `Topology`), read from the parts as they are now, top to
    /// bottom in the order the media flows: the sources and audio inputs, the mixer, the switcher, the
    /// encoders, the fan-out and the program's outputs, each camera's ISO feed, then what sits beside the
    /// pipeline. Read, never kept: a camera found mid-show (`CameraHub`) or an output added or removed
    /// (`ProgramOutputs`) is in the next one or gone from it, with no second list to keep in step.
    /// Cheap (a few locks, no media touched); any thread.
    var topology: Topology {
        var graph = Topology()
        let cameras = self.cameras.all
        // Every backend names its capture thread `cap.camN` (test pattern, V4L2, PipeWire).
        func capture(_ id: CameraID) -> String { "cap.\(id.name)" }

        // Sources and the program audio's inputs, mixed on one clock.
        for camera in cameras {
            graph.add(capture(camera.id), .source, "\(camera.backend.rawValue) camera")
        }
        let inputs = audio.inputs
        for input in inputs {
            if let camera = cameras.first(where: { input.identity == ProgramAudio.sourceIdentity($0.id.name) }) {
                graph.add(input.name, .audioInput, "\(camera.id.name)'s own sound", fedBy: [capture(camera.id)], through: .timedAudio)
            } else {
                graph.add(input.name, .audioInput, input.isMicrophone ? "PipeWire microphone" : "the test tone")
            }
        }
        let mixer = "cap.audio"
        graph.add(mixer, .mixer, "every input on one clock, mixed \(Int(ProgramAudio.lag * 1000)) ms behind it",
                  fedBy: inputs.map(\.name), through: .clocked)

        // The program: switcher, encoders, fan-out, outputs.
        let program = switcher.configuration.threadName
        graph.add(program, .switcher, "clock, cut, compose, slates", fedBy: cameras.map { capture($0.id) }, through: .newest)
        let video = videoStage.role.threadName, audioEncoder = "encode.audio"
        graph.add(video, .encoder, "H.264: VAAPI or x264, x264 after a failure", fedBy: [program],
                  through: .queue(capacity: videoStage.queueCapacity, whenFull: "the frame dropped, counted"))
        graph.add(audioEncoder, .encoder, "AAC", fedBy: [mixer],
                  through: .queue(capacity: audioStage.queueCapacity, whenFull: "the chunk dropped, counted"))
        let fanOut = "fan-out"
        graph.add(fanOut, .fanOut, "every packet to every output's queue", fedBy: [video, audioEncoder], through: .call)
        for entry in outputs.entries where !entry.stopped {
            let output = entry.output
            graph.add(output.threadName, .output, output.destination.isNetwork ? "stream (\(output.destination.kind.name))" : "program recording",
                      fedBy: [fanOut], through: .outputQueue(output.policy.queueLimits))
        }

        // Each camera's ISO feed, with the program audio in its file.
        for iso in self.cameras.isoRecorders {
            let feed = IsoRecorder.threadName(of: iso.cameraID), file = iso.output.threadName
            let source = capture(iso.cameraID)
            switch iso.mode {
            case .encode:
                let encoder = VideoStageRole.iso(iso.cameraID).threadName
                graph.add(feed, .isoFeed, "the camera's own frame clock", fedBy: [source], through: .newest)
                graph.add(encoder, .encoder, "the camera's H.264, at its size", fedBy: [feed],
                          through: .queue(capacity: IsoRecorder.queueCapacity, whenFull: "the frame dropped, counted"))
                graph.add(file, .output, "the camera's ISO recording", fedBy: [encoder, audioEncoder], through: .outputQueue(iso.output.policy.queueLimits))
            case .passthrough:
                graph.add(feed, .isoFeed, "the camera's JPEGs, stamped, not re-encoded", fedBy: [source],
                          through: .queue(capacity: IsoRecorder.passthroughQueueCapacity, whenFull: "the newest JPEG refused, counted"))
                graph.add(file, .output, "the camera's ISO recording", fedBy: [feed, audioEncoder], through: .outputQueue(iso.output.policy.queueLimits))
            }
        }

        // Beside the pipeline: the console's pictures, the events and the control plane.
        graph.add("studio.tiles", .tiles, "the console's live pictures, only while watched",
                  fedBy: cameras.map { capture($0.id) } + [program], through: .newest)
        let events = "events"
        graph.add(events, .events, "every stage emits here; a flapping camera's changes held back")
        graph.add("studio.store", .eventStore, "SQLite writer", fedBy: [events],
                  through: .queue(capacity: store.queueCapacity, whenFull: "the event dropped, counted"))
        graph.add("studio.log", .log, "stderr lines, FFmpeg's too", fedBy: [events],
                  through: .queue(capacity: log.queueCapacity, whenFull: "the line dropped, counted"))
        graph.add("studio.control", .control, "the Unix socket", fedBy: [events],
                  through: .queue(capacity: control.limits.maxQueuedEvents, whenFull: "the event dropped, counted"))
        var askers = ["studio.control"]
        if http != nil {
            graph.add("http", .http, "the HTTP API and console (MHD's threads)", fedBy: [events],
                      through: .queue(capacity: httpEvents.queueLimit, whenFull: "the client dropped (one queue per event stream)"))
            askers.append("http")
        }
        graph.add("studio.query", .queries, "sessions and log queries", fedBy: askers,
                  through: .queue(capacity: queries.queueCapacity, whenFull: "the request answered busy"))
        return graph
    }
}

extension Topology.Handoff {
    static func outputQueue(_ limits: OutputQueue.Limits) -> Self {
        .outputQueue(videoSeconds: limits.maxVideoSeconds, audioSeconds: limits.maxAudioSeconds, bytes: limits.maxBytes)
    }
}

extension Topology {
    /// What the `topology` command answers: the same nodes and edges, each hand-off as its text.
    var reply: TopologyReply {
        TopologyReply(nodes: nodes.map { TopologyReply.Node(name: $0.name, kind: $0.kind.rawValue, what: $0.what) },
                      edges: edges.map { TopologyReply.Edge(from: $0.from, to: $0.to, handoff: $0.handoff.text.replacingOccurrences(of: "`", with: "")) })
    }
}
