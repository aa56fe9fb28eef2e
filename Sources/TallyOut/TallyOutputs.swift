import StudioCore
import StudioSystem

/// Every tally output of the config (`tally:`): a `TSLSender` per TSL destination and the vMix server
/// when `vmix_port` is set, all reading one `TallyFeed`. Started together and stopped together (the
/// server's `tally` service); with nothing configured it starts nothing.
public final class TallyOutputs: Sendable {
    public let feed: TallyFeed
    public let senders: [TSLSender]
    public let vmix: VMixServer?
    private let log: @Sendable (String) -> Void

    public init(settings: TallySettings, feed: TallyFeed, perform: @escaping VMixServer.Perform, log: @escaping @Sendable (String) -> Void) {
        self.feed = feed
        self.log = log
        senders = settings.tsl.enumerated().map { TSLSender(destination: $1, number: $0 + 1, feed: feed, log: log) }
        vmix = settings.vmix.map { VMixServer(listen: $0, functions: settings.vmixFunctions, feed: feed, perform: perform, log: log) }
    }

    /// Starts the senders and the vMix server; throws (nothing left running) when the vMix port cannot be had.
    public func start() throws(SystemError) {
        if let vmix {
            try vmix.start()
            log("tally: vMix-compatible tally server on \(vmix.listen.host):\(vmix.port)"
                + (vmix.functionsAllowed ? " (functions on: its clients may preview and cut)" : " (read-only)"))
        }
        for sender in senders {
            sender.start()
            log("tally: sending \(sender.destination)")
        }
    }

    public func stop() {
        for sender in senders { sender.stop() }
        vmix?.stop()
    }
}
