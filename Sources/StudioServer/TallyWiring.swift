import StudioCore
import StudioSystem
import StudioConfig
import Switcher
import Control
import StudioViews
import TallyOut

/// Tally out (`tally:` in the config, docs/control-surfaces.md): the switcher's one tally rule
/// (`SwitcherStatus.tally`) as a board of lamps, handed to the TSL senders and the vMix server on every
/// `tally` event; the vMix server's functions are the CLI's `preview`, `cut` and `switch`, through the router.
extension StudioServer {
    /// The service `tally`: its outputs started (none without `tally:`), fed from `events`.
    /// On a node following its switcher (`following`), the board is the switcher's tally of the node's
    /// cameras, renewed on each of the switcher's tally changes (the node's own program's are not its tally then).
    static func startTally(_ settings: TallySettings, pins: [CameraPin], switcher: ProgramSwitcher, following: SwitcherFollowing?,
                           router: ControlRouter<StudioServer>, events: ServerEventSink, services: ServiceGroup, log: ServerLog) throws -> TallyOutputs {
        let indices = Dictionary(pins.compactMap { pin in pin.tallyIndex.map { (pin.name.name, $0) } }, uniquingKeysWith: { first, _ in first })
        let feed = TallyFeed { tallyBoard(switcher.status, pinnedIndices: indices, following: following) }
        events.watchTally { feed.changed() }
        following?.client.watch { feed.changed() }
        let outputs = TallyOutputs(settings: settings, feed: feed, perform: { action, done in
            let (command, source): (String, String?) = switch action {
            case .preview(let source): (SwitcherSignatures.Preview.name, source)
            case .cut: (SwitcherSignatures.Cut.name, nil)
            case .switchTo(let source): (SwitcherSignatures.Switch.name, source)
            }
            let arguments: [String: JSONValue] = source.map { ["source": .string($0)] } ?? [:]
            router.handle(ControlRequest(id: "vmix", command: command, arguments: arguments, origin: "vmix")) { reply in
                switch reply.outcome {
                case .success: done(nil)
                case .failure(let error): done(error.message)
                }
            }
        }, log: { log.info($0) })
        try services.start("tally", {
            do { try outputs.start() } catch {
                throw ServerError("cannot serve vMix tally on \(settings.vmix?.description ?? "?"): \(error) (tally.vmix_port and tally.vmix_listen in the config)")
            }
        }, stop: { outputs.stop() })
        return outputs
    }

    /// Every source's lamp: the cameras in the switcher's order, each numbered by its pin's `index:` or
    /// else its place in that order from 1 (the next free number when a pin took it), sorted by number;
    /// then the scenes as declared. Program and preview from the switcher's tally; on a node following its
    /// switcher, from that switcher's (its scenes unlit: the switcher knows only its cameras).
    static func tallyBoard(_ status: SwitcherStatus, pinnedIndices: [String: UInt16], following: SwitcherFollowing? = nil) -> TallyBoard {
        var status = status
        if let following {
            status.tally = following.tally(of: status.sources)
            let lit = { (wanted: Tally) in status.sources.first { status.tally[$0.name] == wanted || status.tally[$0.name] == .both }?.name }
            return board(status, pinnedIndices: pinnedIndices, program: lit(.program), preview: lit(.preview))
        }
        return board(status, pinnedIndices: pinnedIndices, program: status.program?.name, preview: status.preview?.name)
    }

    private static func board(_ status: SwitcherStatus, pinnedIndices: [String: UInt16], program: String?, preview: String?) -> TallyBoard {
        var taken = Set(status.sources.compactMap { pinnedIndices[$0.name] })
        var cameras: [TallyLamp] = []
        for (offset, camera) in status.sources.enumerated() {
            var index = pinnedIndices[camera.name]
            if index == nil {
                var candidate = UInt16(clamping: offset + 1)
                while taken.contains(candidate), candidate < UInt16.max - 1 { candidate += 1 }
                taken.insert(candidate)
                index = candidate
            }
            cameras.append(lamp(camera.name, .camera, index: index, status.tally))
        }
        cameras.sort { ($0.index ?? 0) < ($1.index ?? 0) }
        let scenes = status.scenes.map { lamp($0, .scene, index: nil, status.tally) }
        return TallyBoard(lamps: cameras + scenes, program: program, preview: preview)
    }

    private static func lamp(_ name: String, _ kind: TallyLamp.Kind, index: UInt16?, _ tally: [String: Tally]) -> TallyLamp {
        let state = tally[name]
        return TallyLamp(name: name, kind: kind, index: index, program: state == .program || state == .both,
                         preview: state == .preview || state == .both)
    }
}

extension TallyOutputs {
    /// The tally outputs' counters for `/metrics` (nothing without `tally:`): per TSL `destination`
    /// (`tsl5 udp 192.0.2.20:8900`, its number in the config first), messages sent and TCP connections;
    /// the vMix server's clients, refused lines and dropped clients.
    var metricsText: String {
        var text = MetricsText()
        if !senders.isEmpty {
            let labelled = senders.map { sender in (["destination": "\(sender.threadName.dropFirst("tally.".count)) \(sender.destination)"], sender.counters) }
            text.counter("studio_tally_tsl_messages_total", "TSL UMD messages sent, by destination.", labelled.map { ($0.0, Double($0.1.messages)) })
            let tcp = labelled.filter { $0.0["destination"]?.contains(" tcp ") == true }
            if !tcp.isEmpty {
                text.gauge("studio_tally_tsl_connected", "1 while a TSL TCP destination is connected.", tcp.map { ($0.0, $0.1.connected ? 1 : 0) })
                text.counter("studio_tally_tsl_disconnects_total", "TSL TCP connections lost (closed, failed, or dropped for not reading).",
                             tcp.map { ($0.0, Double($0.1.disconnects)) })
            }
        }
        if let vmix {
            let counters = vmix.counters
            text.gauge("studio_tally_vmix_clients", "Clients of the vMix-compatible tally server now.", Double(counters.clients))
            text.counter("studio_tally_vmix_dropped_clients_total", "vMix clients dropped: not reading, a line too long, or past the limit.",
                         Double(counters.dropped))
            text.counter("studio_tally_vmix_refused_lines_total", "vMix request lines answered with ER.", Double(counters.refusedLines))
        }
        return text.output
    }
}
