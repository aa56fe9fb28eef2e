/// `topology`: the running pipeline as a graph, top to bottom in the order the media flows (as
/// docs/architecture.md draws it in "Topology: what feeds what"): what runs, and what feeds what through
/// which hand-off.
public struct TopologyReply: Codable, Sendable, Equatable {
    public struct Node: Codable, Sendable, Equatable {
        /// Its thread's name (`cap.cam1`, `studio.program`, `out.rtmp1`), or its own (`fan-out`, `tone`).
        public var name: String
        /// `source`, `audio input`, `mixer`, `switcher`, `encoder`, `fan-out`, `output`, `ISO feed`, `tiles`,
        /// `events`, `event store`, `log`, `control`, `http`, `queries`.
        public var kind: String
        public var what: String

        public init(name: String, kind: String, what: String) {
            self.name = name
            self.kind = kind
            self.what = what
        }
    }

    public struct Edge: Codable, Sendable, Equatable {
        public var from: String
        public var to: String
        /// The hand-off, its bound and what a full one does (`BoundedQueue (8); full: the frame dropped, counted`).
        public var handoff: String

        public init(from: String, to: String, handoff: String) {
            self.from = from
            self.to = to
            self.handoff = handoff
        }
    }

    public var nodes: [Node]
    public var edges: [Edge]

    public init(nodes: [Node], edges: [Edge]) {
        self.nodes = nodes
        self.edges = edges
    }
}
