import Synchronization
import StudioCore

/// The one video stream of an ISO file, made by one of two producers at a time. A passthrough ISO
/// copies the camera's own JPEGs (`IsoPassthrough`) while the camera sends them, and encodes its frames
/// (`VideoEncodingStage`) while it sends raw ones: a mode the device offers raw only (`studio camera`),
/// a camera that came back sending raw frames. An encoded ISO has the encoder only.
///
/// `wanted` says which producer the camera's state calls for; only that one's items go on. When it
/// changes, the producer taking over announces its stream again (its newest description, under the next
/// generation, so the file output starts the next file, `-gN.mkv`: one codec per file); the other's
/// items still in flight (a queue's worth at most, sent in the mode the camera has left) are not used,
/// nor the new one's frames stamped at or before the last frame passed on (the two producers stamp on
/// one grid and may both have taken the tick at the handover): one timeline, no frame twice. A frame
/// set aside that way may be the encoder's keyframe, so the producer is asked for another at once.
/// Generations are renumbered so they only grow across producers, as the file output expects. The
/// stream ends (one `.endOfStream`) once every producer that was made has ended.
final class IsoVideoSplice: Sendable {
    enum Producer: Sendable, Hashable {
        case passthrough
        case encoder
    }

    struct Statistics: Sendable, Equatable {
        /// The producer whose items go to the file; nil before the first.
        var active: Producer?
        /// The generation of the stream in the file now (+1 at each description passed on).
        var generation = 0
        /// Times the file's stream passed from one producer to the other.
        var handovers = 0
    }

    private struct State {
        var statistics = Statistics()
        /// Each producer's newest description, as it sent it.
        var descriptions: [Producer: StreamDescription] = [:]
        /// The active producer's generation, and the one the file output knows it by.
        var mapped: (from: Int, to: Int)?
        /// The pts of the last packet passed on before a handover, until the new producer passes it.
        var floor: MediaTime?
        var last: MediaTime?
        var nextGeneration = 0
        var producers: Set<Producer> = []
        var ended: Set<Producer> = []
        var endSent = false
    }

    private let state = Mutex(State())
    private let wanted: @Sendable () -> Producer
    private let forward: @Sendable (MediaItem) -> Void
    private let handedOver: @Sendable (_ from: Producer, _ to: Producer) -> Void
    private let requestKeyframe: @Sendable (Producer) -> Void

    /// - Parameters:
    ///   - wanted: the producer the camera's state calls for; read at each item, must not block.
    ///   - forward: takes the file's video items; must not block (called under the splice's lock, so
    ///     items go on in the order they were decided).
    ///   - handedOver: told (outside the lock) when the stream passes to the other producer.
    ///   - requestKeyframe: asks a producer (outside the lock) for a keyframe: its frame stamped at the
    ///     handover's tick was set aside. Must not block.
    init(wanted: @escaping @Sendable () -> Producer, forward: @escaping @Sendable (MediaItem) -> Void,
         handedOver: @escaping @Sendable (_ from: Producer, _ to: Producer) -> Void = { _, _ in },
         requestKeyframe: @escaping @Sendable (Producer) -> Void = { _ in }) {
        self.wanted = wanted
        self.forward = forward
        self.handedOver = handedOver
        self.requestKeyframe = requestKeyframe
    }

    var statistics: Statistics { state.withLock { $0.statistics } }

    /// A producer that exists (made before the stream can end): the end waits for its `.endOfStream`.
    func expect(_ producer: Producer) {
        state.withLock { _ = $0.producers.insert(producer) }
    }

    func deliver(_ item: MediaItem, from producer: Producer) {
        let isWanted = wanted() == producer
        let (handover, setAside): (Producer?, Bool) = state.withLock { state in
            switch item {
            case .endOfStream:
                state.ended.insert(producer)
                if !state.endSent, state.ended.isSuperset(of: state.producers) {
                    state.endSent = true
                    forward(.endOfStream)
                }
                return (nil, false)
            case .format(let description):
                state.descriptions[producer] = description
                guard isWanted else { return (nil, false) }
                let previous = takeOver(&state, by: producer, announcing: false)
                announce(description, &state)
                return (previous, false)
            case .packet(var packet):
                guard isWanted else { return (nil, false) }
                let previous = takeOver(&state, by: producer, announcing: true)
                guard let mapped = state.mapped, mapped.from == packet.generation else { return (previous, false) }
                if let floor = state.floor {
                    guard packet.pts > floor else { return (previous, true) }
                    state.floor = nil
                }
                packet.generation = mapped.to
                state.last = packet.pts
                forward(.packet(packet))
                return (previous, false)
            }
        }
        if let handover { handedOver(handover, producer) }
        if setAside { requestKeyframe(producer) }
    }

    /// Makes `producer` the active one (announcing its newest description when asked: a packet comes
    /// first); the producer it took over from, if there was one.
    private func takeOver(_ state: inout State, by producer: Producer, announcing: Bool) -> Producer? {
        guard state.statistics.active != producer else { return nil }
        let previous = state.statistics.active
        state.statistics.active = producer
        state.mapped = nil
        state.floor = state.last
        if previous != nil { state.statistics.handovers += 1 }
        if announcing, let description = state.descriptions[producer] { announce(description, &state) }
        return previous
    }

    private func announce(_ description: StreamDescription, _ state: inout State) {
        var renumbered = description
        renumbered.generation = state.nextGeneration
        state.mapped = (description.generation, state.nextGeneration)
        state.statistics.generation = state.nextGeneration
        state.nextGeneration += 1
        forward(.format(renumbered))
    }
}
