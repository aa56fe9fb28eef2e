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
    static func startTally(_ settings: TallySettings, pins: [CameraPin], switcher: ProgramSwitcher, router: ControlRouter<StudioServer>,
                           events: ServerEventSink, services: ServiceGroup, log: ServerLog) throws -> TallyOutputs {
        let indices = Dictionary(pins.compactMap { pin in pin.tallyIndex.map { (pin.name.name, $0) } }, uniquingKeysWith: { first, _ in first })
        let feed = TallyFeed { tallyBoard(switcher.status, pinnedIndices: indices) }
        events.watchTally { feed.changed() }
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
    /// then the scenes as declared. Program and preview from the switcher's tally.
    static func tallyBoard(_ status: SwitcherStatus, pinnedIndices: [String: UInt16]) -> TallyBoard {
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
        return TallyBoard(lamps: cameras + scenes, program: status.program?.name, preview: status.preview?.name)
    }

    private static func lamp(_ name: String, _ kind: TallyLamp.Kind, index: UInt16?, _ tally: [String: Tally]) -> TallyLamp {
        let state = tally[name]
        return TallyLamp(name: name, kind: kind, index: index, program: state == .program || state == .both,
                         preview: state == .preview || state == .both)
    }
}
