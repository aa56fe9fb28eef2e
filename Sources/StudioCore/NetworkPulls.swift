import Foundation

/// A camera that is not plugged into this PC, pulled from a URL libavformat opens (`network.pull` in the
/// config): an IP/PTZ camera on RTSP, a stream on an RTMP server, an SRT listener (studio calls it), HLS
/// over HTTP(S), MPEG-TS over UDP. Its name is the one the config gives it.
public struct NetworkPull: Sendable, Equatable, Encodable {
    /// The camera's name (`name:`), as `studio switch` takes it.
    public var name: CameraID
    /// Where it is pulled from (`url:`); a stream key or passphrase in it is masked in logs, status and
    /// the database (`SecretMasking.maskURL`).
    public var url: String
    /// How long a frame waits after it arrives before it is shown (`latency_ms:`): the jitter buffer's
    /// target, room for the network's jitter. Nil: `kind`'s default.
    public var latencyMilliseconds: Int?
    /// A phone's stream on the RTMP server (`network.rtmp`): pulled only while its publisher is there,
    /// as the server's `on_publish` and `on_publish_done` callbacks say; false: pulled all the time.
    public var waitsForPublisher = false
    /// A caller of the SRT listener (`network.srt`): its connection is handed over by the listener,
    /// there is no URL to open (`url` only describes it).
    public var arrivesOnListener = false

    public init(name: CameraID, url: String, latencyMilliseconds: Int? = nil, waitsForPublisher: Bool = false, arrivesOnListener: Bool = false) {
        self.name = name
        self.url = url
        self.latencyMilliseconds = latencyMilliseconds
        self.waitsForPublisher = waitsForPublisher
        self.arrivesOnListener = arrivesOnListener
    }

    /// The camera's identity, as the event store keeps it (its name follows the entry's `name`).
    public var identity: String { "network:" + name.name }

    /// The kind its URL's scheme names (nil: a scheme no kind takes; the config refuses it).
    public var kind: PullKind? { PullKind.of(url) }
    /// The jitter buffer's target in milliseconds: the configured one, else the kind's default.
    public var latency: Int { latencyMilliseconds ?? kind?.defaultLatencyMilliseconds ?? PullKind.fallbackLatencyMilliseconds }

    /// The keys of a `network.pull` entry (the config reads them; the snapshot writes them).
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name, url, latencyMilliseconds = "latency_ms"
    }

    /// For the snapshot: the URL masked (a stream key never reaches the database).
    public func encode(to encoder: any Encoder) throws {
        var keys = encoder.container(keyedBy: CodingKeys.self)
        try keys.encode(name.name, forKey: .name)
        try keys.encode(SecretMasking.maskURL(url), forKey: .url)
        try keys.encodeIfPresent(latencyMilliseconds, forKey: .latencyMilliseconds)
    }
}

/// The URL schemes a network pull takes, one row each: its protocol's name, and the jitter buffer's
/// default target for it (a protocol that retransmits or buffers upstream needs more room). Declared
/// once; the config's check, its error message and docs/config.md's list come from it.
public struct PullKind: Sendable, Hashable, CustomStringConvertible {
    public let name: String
    public let schemes: [String]
    public let defaultLatencyMilliseconds: Int
    /// libavformat options for this protocol (low-delay reading, timeouts), set before it opens.
    public let options: [(String, String)]
    public var description: String { name }

    public static func == (a: PullKind, b: PullKind) -> Bool { a.name == b.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    public static let rtsp = PullKind(name: "rtsp", schemes: ["rtsp", "rtsps"], defaultLatencyMilliseconds: 200,
                                      options: [("rtsp_flags", "prefer_tcp"), ("timeout", "5000000")])
    public static let rtmp = PullKind(name: "rtmp", schemes: ["rtmp", "rtmps"], defaultLatencyMilliseconds: 300,
                                      options: [("rtmp_live", "live"), ("rw_timeout", "5000000")])
    public static let srt = PullKind(name: "srt", schemes: ["srt"], defaultLatencyMilliseconds: 200,
                                     options: [("rw_timeout", "5000000")])
    public static let hls = PullKind(name: "hls", schemes: ["http", "https"], defaultLatencyMilliseconds: 1000,
                                     options: [("rw_timeout", "5000000")])
    public static let udp = PullKind(name: "udp", schemes: ["udp"], defaultLatencyMilliseconds: 100,
                                     options: [("timeout", "5000000"), ("overrun_nonfatal", "1"), ("fifo_size", "1000000")])

    public static let all: [PullKind] = [.rtsp, .rtmp, .srt, .hls, .udp]
    /// For a scheme no row takes (never reached through the config, which refuses it).
    public static let fallbackLatencyMilliseconds = 200

    /// The schemes, for messages: `rtsp, rtsps, rtmp, ...`.
    public static var schemeList: String { all.flatMap(\.schemes).joined(separator: ", ") }

    public static func of(_ url: String) -> PullKind? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        let scheme = url[..<colon].lowercased()
        return all.first { $0.schemes.contains(scheme) }
    }

    /// What is wrong with `url` as a pull, for the config's message; nil when it will do.
    public static func problem(with url: String) -> String? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else {
            return "expected a URL such as rtsp://192.0.2.10/stream1 (schemes: \(schemeList)), got \"\(url)\""
        }
        guard of(url) != nil else {
            return "a pull takes \(schemeList), got \"\(url[..<colon])\""
        }
        let rest = url[url.index(colon, offsetBy: 3)...]
        let host = rest.prefix { $0 != "/" && $0 != "?" }.split(separator: "@").last ?? ""
        guard !host.isEmpty || url.lowercased().hasPrefix("udp") else { return "the URL names no host: \"\(SecretMasking.maskURL(url))\"" }
        return nil
    }
}

/// How a network source is doing, for `studio cameras`, `/api/v1` and the metrics (one declaration: the
/// reply carries it as it is).
public struct NetworkSourceStatus: Sendable, Codable, Equatable {
    /// The protocol (`PullKind.name`).
    public var `protocol`: String
    /// A phone's stream on the RTMP server: whether its publisher is there now (nil for a plain pull).
    public var publishing: Bool?
    /// Where it comes from, its secrets masked.
    public var remote: String
    public var connected: Bool
    /// Connections tried since the start.
    public var attempts: Int
    /// Why the last try failed or the last connection ended (nil while the first is on).
    public var lastError: String?
    /// While disconnected: how long until the next try.
    public var nextTryMilliseconds: Int?
    /// What the stream carries: `h264 1280x720, aac 48000 Hz 2 ch`.
    public var streams: String
    /// Received over the last second (bits per second).
    public var bitRate: Int
    /// Pictures decoded, shown, and dropped (late, stale after a burst, or pushed out of a full buffer).
    public var picturesIn: Int
    public var picturesShown: Int
    public var picturesDropped: Int
    /// Shown again while no new one came and the stream was alive (a slow publisher: the frame sync).
    public var picturesRepeated: Int = 0
    /// Video packets the decoder refused (a damaged stream, or a broken codec configuration such as an
    /// FLV's AVC record: then every packet is refused and `lastError` says so while connected).
    public var packetsUndecodable: Int = 0
    /// How long the newest picture waits in the buffer (ms), and what the buffer aims for.
    public var bufferMilliseconds: Int
    public var targetMilliseconds: Int
    /// The source's clock against this machine's, ppm (positive: it runs slow); nil until measured.
    public var driftPPM: Double?
    /// Times its timing started over (a publisher restart, a jump).
    public var rebases: Int
    /// How long ago the newest packet came (nil: none yet).
    public var lastPacketAgeMilliseconds: Int?
    /// An SRT connection's own figures (libsrt's), nil for another protocol.
    public var srt: SRTStatistics?
    /// How its video is decoded, once connected (nil before).
    public var decoder: DecoderStatus?
    /// A capture node's camera: when its newest picture was taken, as its stream says (nil for a stream
    /// that carries no capture time: not a node's, or before its first picture).
    public var captureTime: CaptureTiming?

    /// What a capture node's stream says of when its pictures were taken (`CaptureTimeSEI`), against
    /// this machine's wall clock when the picture's packet arrived.
    public struct CaptureTiming: Sendable, Codable, Equatable {
        /// The newest picture's arrival here (its packet read from the stream, before the jitter buffer:
        /// it is shown `buffer_ms` later) less its capture time on the node in this machine's time base:
        /// the hop's latency (capture, encoding, the network), when the node had measured its clock.
        public var captureLatencyMilliseconds: Double
        /// The offset the node measured against this machine and added to its capture times; nil while it
        /// had not measured it (its capture times are then on its own clock, and the latency is off by it).
        public var nodeOffsetMilliseconds: Double?
        public var nodeOffsetMeasured: Bool
        /// Pictures that carried a capture time on this connection.
        public var picturesStamped: Int

        public init(captureLatencyMilliseconds: Double, nodeOffsetMilliseconds: Double?, nodeOffsetMeasured: Bool, picturesStamped: Int) {
            self.captureLatencyMilliseconds = captureLatencyMilliseconds
            self.nodeOffsetMilliseconds = nodeOffsetMilliseconds
            self.nodeOffsetMeasured = nodeOffsetMeasured
            self.picturesStamped = picturesStamped
        }

        enum CodingKeys: String, CodingKey {
            case captureLatencyMilliseconds = "capture_latency_ms", nodeOffsetMilliseconds = "node_offset_ms"
            case nodeOffsetMeasured = "node_offset_measured", picturesStamped = "pictures_stamped"
        }
    }

    /// How a network camera's video is decoded: libavcodec's decoder, its threads, hardware or not, and
    /// whether only reference pictures are decoded now (nobody sees the camera).
    public struct DecoderStatus: Sendable, Codable, Equatable {
        /// libavcodec's decoder (`h264`, `hevc`).
        public var name: String
        /// libavcodec's threads and how they split the work (`slice`, `frame`, or `none` for one).
        public var threads: Int
        public var threadType: String
        /// `vaapi /dev/dri/renderD128` while the GPU decodes; nil in software.
        public var hardware: String?
        /// Why it decodes in software where VAAPI was looked for (no render node, the driver lacks the
        /// codec, opening failed); nil on the GPU.
        public var softwareReason: String?
        /// `all`, or `reference` while nobody sees the camera (its non-reference pictures are skipped).
        public var pictures: String

        public init(name: String, threads: Int, threadType: String, hardware: String? = nil, softwareReason: String? = nil, pictures: String = "all") {
            self.name = name
            self.threads = threads
            self.threadType = threadType
            self.hardware = hardware
            self.softwareReason = softwareReason
            self.pictures = pictures
        }

        enum CodingKeys: String, CodingKey {
            case name, threads, hardware, pictures
            case threadType = "thread_type", softwareReason = "software_reason"
        }

        /// `h264 decoded with 2 slice threads, every picture` / `hevc decoded on vaapi /dev/dri/renderD128,
        /// reference pictures only`.
        public var summary: String {
            let engine = hardware.map { "on \($0)" } ?? "with \(threads) \(threadType) thread\(threads == 1 ? "" : "s")"
            return "\(name) decoded \(engine), \(pictures == "all" ? "every picture" : "reference pictures only")"
        }
    }

    /// What libsrt measures of one connection.
    public struct SRTStatistics: Sendable, Codable, Equatable {
        public var rttMilliseconds: Double
        /// Packets lost on the way (then asked again), received again, and dropped too late to play.
        public var packetsLost: Int
        public var packetsRetransmitted: Int
        public var packetsDropped: Int
        public var receiveRateMbps: Double

        public init(rttMilliseconds: Double, packetsLost: Int, packetsRetransmitted: Int, packetsDropped: Int, receiveRateMbps: Double) {
            self.rttMilliseconds = rttMilliseconds
            self.packetsLost = packetsLost
            self.packetsRetransmitted = packetsRetransmitted
            self.packetsDropped = packetsDropped
            self.receiveRateMbps = receiveRateMbps
        }

        enum CodingKeys: String, CodingKey {
            case rttMilliseconds = "rtt_ms", packetsLost = "packets_lost", packetsRetransmitted = "packets_retransmitted"
            case packetsDropped = "packets_dropped", receiveRateMbps = "receive_rate_mbps"
        }
    }

    public init(protocol: String, remote: String, connected: Bool = false, attempts: Int = 0, lastError: String? = nil,
                nextTryMilliseconds: Int? = nil, streams: String = "", bitRate: Int = 0, picturesIn: Int = 0, picturesShown: Int = 0,
                picturesDropped: Int = 0, bufferMilliseconds: Int = 0, targetMilliseconds: Int = 0, driftPPM: Double? = nil,
                rebases: Int = 0, lastPacketAgeMilliseconds: Int? = nil) {
        self.protocol = `protocol`
        self.remote = remote
        self.connected = connected
        self.attempts = attempts
        self.lastError = lastError
        self.nextTryMilliseconds = nextTryMilliseconds
        self.streams = streams
        self.bitRate = bitRate
        self.picturesIn = picturesIn
        self.picturesShown = picturesShown
        self.picturesDropped = picturesDropped
        self.bufferMilliseconds = bufferMilliseconds
        self.targetMilliseconds = targetMilliseconds
        self.driftPPM = driftPPM
        self.rebases = rebases
        self.lastPacketAgeMilliseconds = lastPacketAgeMilliseconds
    }

    enum CodingKeys: String, CodingKey {
        case `protocol`, remote, connected, attempts, streams, rebases, publishing
        case lastError = "last_error", nextTryMilliseconds = "next_try_ms", bitRate = "bit_rate"
        case picturesIn = "pictures_in", picturesShown = "pictures_shown", picturesDropped = "pictures_dropped", picturesRepeated = "pictures_repeated"
        case packetsUndecodable = "packets_undecodable"
        case bufferMilliseconds = "buffer_ms", targetMilliseconds = "target_ms", driftPPM = "drift_ppm"
        case lastPacketAgeMilliseconds = "last_packet_age_ms", srt, decoder
        case captureTime = "capture_time"
    }

    /// One line for `studio cameras`: `rtmp connected, 1.2 Mbit/s, buffer 180/200 ms, ...`.
    public var summary: String {
        if publishing == false, !connected { return "\(`protocol`): waiting for its publisher" }
        guard connected else {
            var line = "\(`protocol`) not connected (attempt \(attempts)"
            if let next = nextTryMilliseconds { line += String(format: ", next try in %.1f s", Double(next) / 1000) }
            line += ")"
            if let lastError { line += ": \(lastError)" }
            return line
        }
        var parts = ["\(`protocol`) connected", String(format: "%.1f Mbit/s", Double(bitRate) / 1e6),
                     "buffer \(bufferMilliseconds)/\(targetMilliseconds) ms",
                     "pictures \(picturesIn) in, \(picturesShown) shown, \(picturesRepeated) repeated, \(picturesDropped) dropped"]
        if packetsUndecodable > 0 { parts.append("\(packetsUndecodable) packets undecodable") }
        if let lastError { parts.append(lastError) }
        if let driftPPM { parts.append(String(format: "drift %+.0f ppm", driftPPM)) }
        if let age = lastPacketAgeMilliseconds { parts.append("last packet \(age) ms ago") }
        if let decoder { parts.append(decoder.summary) }
        if let captureTime {
            parts.append(String(format: "captured %.1f ms before arrival", captureTime.captureLatencyMilliseconds)
                         + (captureTime.nodeOffsetMilliseconds.map { String(format: " (node clock offset %+.1f ms)", $0) } ?? " (node clock not measured)"))
        }
        if let srt {
            parts.append(String(format: "SRT rtt %.1f ms, %d lost, %d retransmitted, %d dropped", srt.rttMilliseconds, srt.packetsLost,
                                srt.packetsRetransmitted, srt.packetsDropped))
        }
        return parts.joined(separator: ", ")
    }
}
