import Control

// The running server's state as the server and the CLI both know it: `status`, `levels`, `metrics`,
// `topology` and `reload`. (`audio` and `picture`, whose arguments read several spellings of one value, follow.)

extension MetricsReply {
    /// The Prometheus text exposition format 0.0.4, as `/metrics` serves it.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"
}

public enum StatusSignatures {
    public enum Status: CommandSignature {
        public typealias Reply = StatusReply
        public static let name = "status"
        public static let summary = "the program, encoder, outputs, ISO recordings and audio input, with their counters"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/status")
    }

    public enum Levels: CommandSignature {
        public typealias Reply = LevelsReply
        public static let name = "levels"
        public static let summary = "the program audio's peak, RMS and peak-hold levels in dBFS per channel (the console's meter polls it)"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/levels")
    }

    public enum Metrics: CommandSignature {
        public typealias Reply = MetricsReply
        public static let name = "metrics"
        public static let summary = "the status and camera counters in the Prometheus text format, as {\"text\": ...}"
        public static let httpRoute: ControlHTTPRoute? = .get("/metrics", text: "text", contentType: MetricsReply.contentType)
    }

    public enum Topology: CommandSignature {
        public typealias Reply = TopologyReply
        public static let name = "topology"
        public static let summary = "the running pipeline as a graph: what runs (sources, mixer, switcher, encoders, fan-out, outputs, ISO feeds...) and what feeds what, through which hand-off"
        public static let httpRoute: ControlHTTPRoute? = .get("/api/v1/topology")
    }

    public enum Reload: CommandSignature {
        public typealias Reply = ReloadReply
        public static let name = "reload"
        public static let summary = "re-reads the config file: scenes, overlays, transition, backups, pictures and mixer settings change live; anything else is refused"
        public static let httpRoute: ControlHTTPRoute? = .post("/api/v1/reload")
    }
}
