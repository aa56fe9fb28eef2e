import Foundation
import StudioCore
import Encoding
import IsoRecording
import StudioConfig
import TallyOut
import StudioSystem
import Switcher

// How a capture node (`node:`, `serve --node NAME --send URL`) sends its cameras to its switcher: each
// camera fed like an ISO file (its own frame clock, encoder thread and output thread, bounded queues
// that drop and count, never the program's path), into an SRT output instead of a file.

extension StudioServer {
    /// Each camera's sender to the switcher (nil when this server is no node): MPEG-TS over SRT as a
    /// caller, stream id `NAME/CAM`, reconnected with backoff by the output like any SRT output; the
    /// program audio rides with it (the camera's own microphone is not sent yet). Made for every
    /// camera the hub adds, hot-plugged ones included; a removed camera's sender ends with it.
    static func senderFactory(options: ServerOptions, clock: SwitcherClockClient?, events: ServerEventSink, log: ServerLog,
                              audioFormat: StreamDescription) -> CameraHub.IsoFactory? {
        let configuration = options.configuration
        guard let node = configuration.node else { return nil }
        var settings = IsoRecorder.Settings(preset: NodeSettings.preset, bitRate: node.bitRate, keyframeIntervalSeconds: 1,
                                            fallbackRate: configuration.program.frameRate, staleAfterSeconds: options.cameraLossTimeoutSeconds)
        settings.feed = .send
        settings.encoder = VideoEncoderChoice(configuration.video.encoder)
        settings.faultInjectionAfterFrames = options.injectEncoderFaultAfterFrames
        settings.stamp = captureTimeStamp(wallClock: options.wallClock, offset: clock)
        return { [settings] camera in
            // The camera's own bit rate and size (`video.cameras`), else the node's.
            var settings = settings
            let video = node.video(of: camera.id)
            (settings.bitRate, settings.size) = (video.bitRate, video.size)
            let size = video.size.map { "\($0.width)x\($0.height)" } ?? "its own size"
            let url = node.url(of: camera.id)
            let sender = IsoRecorder(camera: camera, path: url, settings: settings, events: events, report: { log.info($0) })
            sender.deliverAudio(.format(audioFormat))
            log.info("node \(node.name): sending \(camera.id.name) to \(SecretMasking.maskURL(node.send)) as \(node.streamID(of: camera.id)) "
                     + "(\(BitRate.describe(video.bitRate)), \(size), encoder \(settings.encoder.rawValue))")
            return sender
        }
    }
}

extension StudioServer {
    /// Each sent picture's capture time, in the switcher's time base, as an SEI before its slices
    /// (`CaptureTimeSEI`): the frame's capture time on this node's wall clock plus the offset measured
    /// against the switcher; this node's own clock (flagged unmeasured) until it is measured, or when the
    /// node has no `tally_from` to measure it with. A packet without its frame's times (one of several an
    /// encoder gave at once) goes without.
    static func captureTimeStamp(wallClock: WallClock, offset: SwitcherClockClient?) -> @Sendable (EncodedPacket) -> EncodedPacket {
        { packet in
            guard let capture = packet.times?.capture, capture > 0 else { return packet }
            let measured = offset?.offsetMicroseconds
            let sei = CaptureTimeSEI(captureTime: wallClock.time(ofMonotonic: capture) + (measured ?? 0), offset: measured ?? 0,
                                     offsetMeasured: measured != nil)
            var stamped = packet
            stamped.data = sei.inserted(intoLengthPrefixed: packet.data)
            return stamped
        }
    }

    /// On a node with `tally_from`, its clock against the switcher's (`SwitcherClockClient`, thread
    /// `clock.from-switcher`), said in the log and the history (`clock_offset`) when first measured and
    /// when it moves by more than 5 ms; nil otherwise.
    static func makeSwitcherClock(_ options: ServerOptions, events: ServerEventSink, log: ServerLog) -> SwitcherClockClient? {
        guard let node = options.configuration.node, let address = node.tallyFrom else { return nil }
        return SwitcherClockClient(address: address, token: node.tallyToken, clock: options.wallClock, log: { log.info($0) }) { status, first in
            let offset = Self.milliseconds(status.offsetMilliseconds), rtt = Self.milliseconds(status.roundTripMilliseconds)
            log.info("clock against the switcher at http://\(address): \(first ? "measured" : "moved"): offset \(offset) ms (round trip \(rtt) ms)")
            events.emit(StudioEvent(kind: .clockOffset, details: ["offset_ms": offset, "rtt_ms": rtt, "switcher": "http://\(address)",
                                                                  "first": first ? "yes" : "no"]))
        }
    }

    static func milliseconds(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "-" }

    /// What `status` and `cameras` say of this node's clock against its switcher's; nil when this
    /// server does not measure it (no node, or no `tally_from`).
    var switcherClockStatus: ClockOffsetStatus? { switcherClock?.status }

    /// The service `node-tally`: on a node with `tally_from`, the thread `tally.from-switcher` following
    /// the switcher's tally over its HTTP event stream (`SwitcherTallyClient`); nothing (and nil) otherwise.
    static func startSwitcherTally(_ client: SwitcherTallyClient?, services: ServiceGroup) {
        services.start("node-tally", { client?.start() }, stop: { client?.stop() })
    }

    /// The client following the switcher's tally, on a node with `tally_from` (nil otherwise); not started.
    static func switcherTallyClient(_ node: NodeSettings?, log: ServerLog) -> SwitcherTallyClient? {
        node.flatMap { node in node.tallyFrom.map { SwitcherTallyClient(address: $0, token: node.tallyToken, log: { log.info($0) }) } }
    }

    /// What the switcher shows of this node's camera `camera` (its `NODE/CAM` there); nil when this
    /// server follows no switcher's tally.
    func switcherTally(of camera: CameraID) -> SwitcherTallyClient.Lamp? {
        guard let client = switcherTally, let node = reloader.configuration.node else { return nil }
        return client.tally(of: node.streamID(of: camera))
    }
}

/// A node's tally rule when it follows its switcher (`tally_from`): each of its cameras is lit as the
/// switcher lights `NODE/CAM` (nothing while the switcher is away: `unknown` is no light, never a stale
/// red). Every tally output of the node (TSL, vMix, OSC) reads it through `StudioServer.tallyBoard`.
struct SwitcherFollowing: Sendable {
    let client: SwitcherTallyClient
    let node: NodeSettings

    init?(_ client: SwitcherTallyClient?, node: NodeSettings?) {
        guard let client, let node else { return nil }
        (self.client, self.node) = (client, node)
    }

    /// The switcher's tally of `cameras` (this node's), by this node's names.
    func tally(of cameras: [CameraID]) -> [String: Tally] {
        var tally: [String: Tally] = [:]
        for camera in cameras {
            switch client.tally(of: node.streamID(of: camera)) {
            case .program: tally[camera.name] = .program
            case .preview: tally[camera.name] = .preview
            case .both: tally[camera.name] = .both
            case .none, .unknown: break
            }
        }
        return tally
    }
}
