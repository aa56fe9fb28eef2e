import StudioCore
import StudioSystem
import Control
import TallyOut

/// OSC in and out (`osc:` in the config, docs/control-surfaces.md): the OSC server on the tally feed
/// (`TallyOutputs.feed`, the switcher's one tally rule), its messages the CLI's commands through the
/// router (`OSCBridge`), the mixer's meters as its levels.
extension StudioServer {
    /// The service `osc`: the OSC server, or nil and nothing started without `osc.listen`.
    static func startOSC(_ settings: OSCSettings, feed: TallyFeed, audio: ProgramAudio, router: ControlRouter<StudioServer>,
                         services: ServiceGroup, log: ServerLog) throws -> OSCServer? {
        let bridge = OSCBridge(ServerCommands.all)
        let levels: OSCServer.Levels = { [audio] in
            let meters = audio.meters
            func loudest(_ levels: AudioLevels?) -> Double { levels?.peakDBFS.max() ?? AudioLevels.floor }
            return audio.inputs.map { ($0.name, loudest(meters.inputs[$0.name])) } + [("master", loudest(meters.program))]
        }
        let server = OSCServer(settings: settings, feed: feed, dispatch: bridge.dispatch(router), levels: levels, log: { log.info($0) })
        try services.start("osc", {
            guard let server else { return }
            do { try server.start() } catch {
                throw ServerError("cannot listen for OSC on udp \(settings.listen?.description ?? "?"): \(error) (osc.listen in the config)")
            }
            log.info("osc: listening on udp \(settings.listen?.host ?? "?"):\(server.port)"
                     + (settings.feedback.isEmpty ? "" : "; feedback to \(settings.feedback.map(\.description).joined(separator: ", "))"))
        }, stop: { server?.stop() })
        return server
    }
}

extension OSCServer {
    /// The OSC server's counters for `/metrics`.
    var metricsText: String {
        var text = MetricsText()
        let counters = self.counters
        text.counter("studio_osc_packets_total", "OSC datagrams received.", Double(counters.packets))
        text.counter("studio_osc_messages_total", "OSC messages received (a bundle's each).", Double(counters.messages))
        text.counter("studio_osc_refused_total", "OSC packets or messages refused, by reason: malformed, unknown_address, invalid_argument, failed (the command answered an error), subscriptions_full.",
                     Refusal.allCases.map { (["reason": $0.rawValue], Double(counters.refused[$0] ?? 0)) })
        text.counter("studio_osc_feedback_messages_total", "OSC tally and level messages sent to subscribers and feedback addresses.", Double(counters.feedbackSent))
        text.counter("studio_osc_sends_dropped_total", "OSC messages the kernel would not take at once (or could not send): dropped, never waited for.", Double(counters.sendsDropped))
        text.gauge("studio_osc_subscribers", "Peers subscribed by /studio/subscribe now (the config's feedback addresses not counted).", Double(counters.subscribers))
        return text.output
    }
}
