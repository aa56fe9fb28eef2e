import Synchronization
import StudioCore
import StudioSystem
import Encoding

/// Keeps every event, for assertions.
final class CollectingSink: EventSink {
    private let stored = Mutex<[StudioEvent]>([])
    func emit(_ event: StudioEvent) { stored.withLock { $0.append(event) } }
    var events: [StudioEvent] { stored.withLock { $0 } }
    func events(_ kind: EventKind) -> [StudioEvent] { events.filter { $0.kind == kind } }
}

/// Keeps every item a stage delivers.
final class ItemCollector: Sendable {
    private let stored = Mutex<[MediaItem]>([])
    func deliver(_ item: MediaItem) { stored.withLock { $0.append(item) } }
    var items: [MediaItem] { stored.withLock { $0 } }
    var packets: [EncodedPacket] { items.compactMap { if case .packet(let p) = $0 { p } else { nil } } }
    var formats: [StreamDescription] { items.compactMap { if case .format(let f) = $0 { f } else { nil } } }
}

/// NAL unit types in a length-prefixed (avcC-style) H.264 access unit.
func nalTypes(_ data: [UInt8], lengthSize: Int = 4) -> [Int] {
    var types: [Int] = []
    var offset = 0
    while offset + lengthSize <= data.count {
        var length = 0
        for i in 0..<lengthSize { length = length << 8 | Int(data[offset + i]) }
        offset += lengthSize
        guard length > 0, offset + length <= data.count else { break }
        types.append(Int(data[offset] & 0x1f))
        offset += length
    }
    return types
}

let smallSettings = VideoEncoderSettings(width: 320, height: 180, frameRate: Rational(30), bitRate: 400_000,
                                         preset: "ultrafast", keyframeIntervalSeconds: 2)
