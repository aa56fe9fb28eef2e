import Foundation
import StudioCore
import Capture
import Encoding
import Output
import IsoRecording
import TallyOut

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

        // Sources (each by the thread that publishes its frames: `cap.camN`, a network camera's
        // `net.camN.out`) and the program audio's inputs, mixed on one clock.
        var capture: [CameraID: String] = [:]
        for camera in cameras {
            capture[camera.id] = graph.add(camera.threadName, .source, "\(camera.backend.rawValue) camera")
        }
        let captures = cameras.compactMap { capture[$0.id] }
        var inputs: [String] = []
        for input in audio.inputs {
            if let camera = cameras.first(where: { input.identity == ProgramAudio.sourceIdentity($0.id.name) }), let source = capture[camera.id] {
                inputs.append(graph.add(input.name, .audioInput, "\(camera.id.name)'s own sound", fedBy: [source], through: .timedAudio))
            } else {
                inputs.append(graph.add(input.name, .audioInput, input.isMicrophone ? "microphone (\(input.source))" : "the test tone"))
            }
        }
        let mixer = graph.add("cap.audio", .mixer, "every input on one clock, mixed \(Int(ProgramAudio.lag * 1000)) ms behind it",
                              fedBy: inputs, through: .clocked)

        // The program: switcher, encoders, fan-out, outputs.
        let program = graph.add(switcher.configuration.threadName, .switcher, "clock, cut, compose, slates", fedBy: captures, through: .newest)
        let video = graph.add(videoStage.role.threadName, .encoder, "H.264: VAAPI or x264, x264 after a failure", fedBy: [program],
                              through: .queue(capacity: videoStage.queueCapacity, whenFull: "the frame dropped, counted"))
        let audioEncoder = graph.add("encode.audio", .encoder, "AAC", fedBy: [mixer],
                                     through: .queue(capacity: audioStage.queueCapacity, whenFull: "the chunk dropped, counted"))
        let fanOut = graph.add("fan-out", .fanOut, "every packet to every output's queue", fedBy: [video, audioEncoder], through: .call)
        for entry in outputs.entries where !entry.stopped {
            let output = entry.output
            graph.add(output.threadName, .output, output.destination.isNetwork ? "stream (\(output.destination.kind.name))" : "program recording",
                      fedBy: [fanOut], through: .outputQueue(output.policy.queueLimits))
        }

        // Each camera's ISO feed, with the program audio in its file.
        for iso in self.cameras.isoRecorders {
            guard let source = capture[iso.cameraID] else { continue }
            let file = iso.output.threadName, toFile = Topology.Handoff.outputQueue(iso.output.policy.queueLimits)
            switch iso.mode {
            case .encode:
                let feed = graph.add(IsoRecorder.threadName(of: iso.cameraID), .isoFeed, "the camera's own frame clock",
                                     fedBy: [source], through: .newest)
                let encoder = graph.add(VideoStageRole.iso(iso.cameraID).threadName, .encoder, "the camera's H.264, at its size", fedBy: [feed],
                                        through: .queue(capacity: IsoRecorder.queueCapacity, whenFull: "the frame dropped, counted"))
                graph.add(file, .output, "the camera's ISO recording", fedBy: [encoder, audioEncoder], through: toFile)
            case .passthrough:
                let feed = graph.add(IsoRecorder.threadName(of: iso.cameraID), .isoFeed, "the camera's own JPEGs or H.264/HEVC, stamped, not re-encoded", fedBy: [source],
                                     through: .queue(capacity: IsoRecorder.passthroughQueueCapacity, whenFull: "the newest frame refused, counted (keyframes last)"))
                graph.add(file, .output, "the camera's ISO recording", fedBy: [feed, audioEncoder], through: toFile)
            }
        }

        // A capture node's senders: each camera encoded on its own, to the switcher over SRT.
        for sender in self.cameras.senders {
            guard let source = capture[sender.cameraID] else { continue }
            let feed = graph.add(IsoRecorder.threadName(of: sender.cameraID, feed: .send), .isoFeed, "the camera's own frame clock, at the node's size",
                                 fedBy: [source], through: .newest)
            let encoder = graph.add(VideoStageRole.send(sender.cameraID).threadName, .encoder, "the camera's H.264 for the switcher", fedBy: [feed],
                                    through: .queue(capacity: IsoRecorder.queueCapacity, whenFull: "the frame dropped, counted"))
            graph.add(sender.output.threadName, .output, "stream (srt) to the switcher", fedBy: [encoder, audioEncoder],
                      through: .outputQueue(sender.output.policy.queueLimits))
        }

        // Beside the pipeline: the console's pictures, the events and the control plane.
        graph.add("studio.tiles", .tiles, "the console's live pictures, only while watched", fedBy: captures + [program], through: .newest)
        // Tally out (`tally:`): the newest tally board, published from the program thread's tally events.
        for sender in tally.senders {
            graph.add(sender.threadName, .tally, sender.destination.description, fedBy: [program], through: .newest)
        }
        if let vmix = tally.vmix {
            graph.add(VMixServer.threadName, .tally, "vMix-compatible tally server on \(vmix.listen.host):\(vmix.port)", fedBy: [program], through: .newest)
        }
        if let osc, let listen = osc.settings.listen {
            graph.add(OSCServer.threadName, .tally, "OSC in and out on udp \(listen.host):\(osc.port): commands through the router, tally and levels back", fedBy: [program], through: .newest)
        }
        if let switcherTally {
            graph.add(SwitcherTallyClient.threadName, .tally, "the switcher's tally read from http://\(switcherTally.address)/api/v1/events for this node's cameras")
        }
        if let switcherClock {
            graph.add(SwitcherClockClient.threadName, .tally, "this node's clock against the switcher's, from http://\(switcherClock.address)\(SwitcherClockClient.path) every few seconds")
        }
        let events = graph.add("events", .events, "every stage emits here; a flapping camera's changes held back")
        graph.add("studio.store", .eventStore, "SQLite writer", fedBy: [events],
                  through: .queue(capacity: store.queueCapacity, whenFull: "the event dropped, counted"))
        graph.add("studio.log", .log, "stderr lines, FFmpeg's too", fedBy: [events],
                  through: .queue(capacity: log.queueCapacity, whenFull: "the line dropped, counted"))
        var askers = [graph.add("studio.control", .control, "the Unix socket", fedBy: [events],
                                through: .queue(capacity: control.limits.maxQueuedEvents, whenFull: "the event dropped, counted"))]
        if http != nil {
            askers.append(graph.add("http", .http, "the HTTP API and console (MHD's threads)", fedBy: [events],
                                    through: .queue(capacity: httpEvents.queueLimit, whenFull: "the client dropped (one queue per event stream)")))
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
