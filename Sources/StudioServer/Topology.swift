/// The pipeline as a graph, in the order the media flows (as FFmpeg's `ffmpeg_sched` lays its own out):
/// sources -> switcher -> encoders -> fan-out -> outputs, each camera's ISO feed, the audio inputs and
/// their mixer, and beside them the events, the store and the control plane. A node is what runs (named
/// after its thread where it has one, as `top -H` shows it); an edge says what feeds what and through
/// which hand-off, with its bound and what happens when it is full. None of the hand-offs blocks its
/// producer.
///
/// A value: `StudioServer.topology` builds one from the parts as they are at that moment (see
/// ServerTopology.swift), so a camera or an output that comes or goes mid-show is in it or not.
/// docs/architecture.md's section "Topology: what feeds what" is `rows` of a test server's
/// (`TopologyTableTests`).
struct Topology: Sendable, Equatable {
    enum Kind: String, Sendable {
        case source
        case audioInput = "audio input"
        case mixer
        case switcher
        case encoder
        case fanOut = "fan-out"
        case output
        case isoFeed = "ISO feed"
        case tiles
        case tally = "tally out"
        case events
        case eventStore = "event store"
        case log
        case control
        case http
        case queries
    }

    struct Node: Sendable, Equatable {
        /// Its thread's name (`cap.cam1`, `studio.program`, `out.rtmp1`), or its own (`fan-out`, `tone`).
        var name: String
        var kind: Kind
        /// What it is, in a few words (`test-pattern camera`, `x264`).
        var what: String
    }

    /// How one stage hands its work to the next.
    enum Handoff: Sendable, Equatable {
        /// A `LatestValue`: the producer replaces the newest, the reader takes it when it wants; nothing queues.
        case newest
        /// A `BoundedQueue` of `capacity` items; a full one refuses the item, which the producer `whenFull`.
        case queue(capacity: Int, whenFull: String)
        /// An output's own `OutputQueue`, bounded by media time and bytes (`OutputQueue.Limits`).
        case outputQueue(videoSeconds: Double, audioSeconds: Double, bytes: Int)
        /// The input is read on the mixer's clock (`ClockedAudioInput`: the tone makes what is due).
        case clocked
        /// Timestamped chunks pushed into a `TimedAudioInput` (jitter buffer, resampled to the program clock).
        case timedAudio
        /// A call on the producer's thread that only hands the item on (the fan-out's `deliver`).
        case call
        /// `EventSink.emit`: the event is passed on without waiting for anyone.
        case event

        var text: String {
            switch self {
            case .newest: return "newest only (`LatestValue`)"
            case .queue(let capacity, let whenFull): return "`BoundedQueue` (\(capacity)); full: \(whenFull)"
            case .outputQueue(let video, let audio, let bytes):
                return "`OutputQueue` (\(Self.seconds(video)) s video, \(Self.seconds(audio)) s audio, \(bytes >> 20) MiB); full: non-key video dropped first, audio last"
            case .clocked: return "read on the mixer's clock"
            case .timedAudio: return "timed chunks (`TimedAudioInput`)"
            case .call: return "a call on the encoder's thread"
            case .event: return "`EventSink`"
            }
        }

        private static func seconds(_ value: Double) -> String {
            value == value.rounded() ? String(Int(value)) : String(value)
        }
    }

    struct Edge: Sendable, Equatable {
        var from: String
        var to: String
        var handoff: Handoff
    }

    private(set) var nodes: [Node] = []
    private(set) var edges: [Edge] = []

    /// Adds a node named `name` fed by `inputs` (nodes added before it) through `handoff`, and returns the
    /// name it got: a name is a node's key, so one already taken (a camera pinned as `audio` has the
    /// capture thread `cap.audio`, as the mixer does) gets a suffix (`cap.audio#2`). Feed the node by the
    /// name returned.
    @discardableResult
    mutating func add(_ name: String, _ kind: Kind, _ what: String, fedBy inputs: [String] = [], through handoff: Handoff? = nil) -> String {
        var unique = name, number = 2
        while nodes.contains(where: { $0.name == unique }) {
            unique = "\(name)#\(number)"
            number += 1
        }
        nodes.append(Node(name: unique, kind: kind, what: what))
        if let handoff { feed(unique, from: inputs, through: handoff) }
        return unique
    }

    /// One more way into `name`: from each of `inputs` (names `add` returned) through `handoff`.
    mutating func feed(_ name: String, from inputs: [String], through handoff: Handoff) {
        for input in inputs { edges.append(Edge(from: input, to: name, handoff: handoff)) }
    }

    func node(named name: String) -> Node? { nodes.first { $0.name == name } }
    /// The edges into `name`, in the order they were added.
    func inputs(of name: String) -> [Edge] { edges.filter { $0.to == name } }

    /// One row per node, top to bottom: its name, kind, what it is, and what feeds it (the feeders of one
    /// hand-off together: "`cap.cam1`, `cap.cam2`: newest only"; several hand-offs joined by "; ").
    /// docs/architecture.md shows these rows.
    var rows: [[String]] {
        nodes.map { node in
            var groups: [(handoff: Handoff, from: [String])] = []
            for edge in inputs(of: node.name) {
                if let index = groups.firstIndex(where: { $0.handoff == edge.handoff }) {
                    groups[index].from.append(edge.from)
                } else {
                    groups.append((edge.handoff, [edge.from]))
                }
            }
            let fedBy = groups.map { group in group.from.map { "`\($0)`" }.joined(separator: ", ") + ": " + group.handoff.text }
            return ["`\(node.name)`", node.kind.rawValue, node.what, fedBy.isEmpty ? "-" : fedBy.joined(separator: "; ")]
        }
    }
}
