import Testing
import Synchronization
import StudioCore
@testable import IsoRecording

/// The splice of an ISO's two video producers on its own: which items reach the file, under which
/// generation, and when the stream ends.
@Suite struct IsoVideoSpliceTests {
    /// What the file output receives, in order.
    final class Received: Sendable {
        let items = Mutex<[MediaItem]>([])
        var formats: [StreamDescription] {
            items.withLock { $0.compactMap { if case .format(let description) = $0 { description } else { nil } } }
        }
        var packets: [EncodedPacket] {
            items.withLock { $0.compactMap { if case .packet(let packet) = $0 { packet } else { nil } } }
        }
        var ends: Int { items.withLock { $0.filter { if case .endOfStream = $0 { true } else { false } }.count } }
    }

    static func description(_ codec: CodecKind, generation: Int, width: Int = 640) -> StreamDescription {
        StreamDescription(kind: .video, codec: codec, width: width, height: 360, frameRate: Rational(30), bitRate: 0,
                          extradata: codec == .h264 ? [1, 2, 3] : [], encoderName: "test", generation: generation)
    }

    static func packet(_ byte: UInt8, generation: Int) -> EncodedPacket {
        let pts = MediaTime(microseconds: Int64(byte) * 33_333)
        return EncodedPacket(kind: .video, data: [byte], pts: pts, dts: pts, duration: MediaTime(microseconds: 33_333),
                             isKeyframe: true, generation: generation)
    }

    @Test func theStreamFollowsTheWantedProducerUnderGenerationsThatOnlyGrow() {
        let wanted = Mutex(IsoVideoSplice.Producer.passthrough)
        let received = Received()
        let handovers = Mutex<[IsoVideoSplice.Producer]>([]), keyframesAsked = Mutex<[IsoVideoSplice.Producer]>([])
        let splice = IsoVideoSplice(wanted: { wanted.withLock { $0 } }, forward: { item in received.items.withLock { $0.append(item) } },
                                    handedOver: { _, to in handovers.withLock { $0.append(to) } },
                                    requestKeyframe: { producer in keyframesAsked.withLock { $0.append(producer) } })
        splice.expect(.passthrough)
        splice.deliver(.format(Self.description(.mjpeg, generation: 0)), from: .passthrough)
        splice.deliver(.packet(Self.packet(1, generation: 0)), from: .passthrough)
        splice.deliver(.packet(Self.packet(2, generation: 0)), from: .passthrough)
        #expect(splice.statistics == .init(active: .passthrough, generation: 0, handovers: 0))

        // The camera sends raw frames: the encoder is made and announces itself (its own generation 0).
        wanted.withLock { $0 = .encoder }
        splice.expect(.encoder)
        splice.deliver(.packet(Self.packet(3, generation: 0)), from: .passthrough)  // a JPEG still in flight: not used
        splice.deliver(.format(Self.description(.h264, generation: 0)), from: .encoder)
        splice.deliver(.packet(Self.packet(4, generation: 0)), from: .encoder)
        #expect(splice.statistics == .init(active: .encoder, generation: 1, handovers: 1))

        // JPEGs again: the passthrough feed's stream is announced again before its next packet, though it
        // did not change (a new file); then raw once more, and the encoder's too.
        wanted.withLock { $0 = .passthrough }
        splice.deliver(.packet(Self.packet(5, generation: 0)), from: .encoder)  // not used
        // Stamped on the tick the encoder's last frame took (both stamp on one grid): not twice.
        splice.deliver(.packet(Self.packet(4, generation: 0)), from: .passthrough)
        splice.deliver(.packet(Self.packet(6, generation: 0)), from: .passthrough)
        wanted.withLock { $0 = .encoder }
        // The encoder's frame on the tick the last JPEG took: set aside, and the encoder asked for a
        // keyframe (that frame may have been its only one for a while).
        splice.deliver(.packet(Self.packet(6, generation: 0)), from: .encoder)
        splice.deliver(.packet(Self.packet(7, generation: 0)), from: .encoder)
        // The encoder reopens at another size (its generation 1): the next generation again.
        splice.deliver(.format(Self.description(.h264, generation: 1, width: 320)), from: .encoder)
        splice.deliver(.packet(Self.packet(8, generation: 0)), from: .encoder)  // before the reopen: stale
        splice.deliver(.packet(Self.packet(9, generation: 1)), from: .encoder)

        #expect(received.formats.map(\.codec) == [.mjpeg, .h264, .mjpeg, .h264, .h264])
        #expect(received.formats.map(\.generation) == [0, 1, 2, 3, 4])
        #expect(received.formats.map(\.width) == [640, 640, 640, 640, 320])
        #expect(received.packets.map { $0.data[0] } == [1, 2, 4, 6, 7, 9])
        #expect(received.packets.map(\.generation) == [0, 0, 1, 2, 3, 4])
        #expect(handovers.withLock { $0 } == [.encoder, .passthrough, .encoder])
        #expect(keyframesAsked.withLock { $0 } == [.passthrough, .encoder])
        #expect(splice.statistics == .init(active: .encoder, generation: 4, handovers: 3))

        // One end of stream, once both producers have ended, whichever order they end in.
        splice.deliver(.endOfStream, from: .encoder)
        #expect(received.ends == 0)
        splice.deliver(.endOfStream, from: .passthrough)
        #expect(received.ends == 1)
    }

    @Test func anEncodedISOsStreamGoesThroughAsItCame() {
        let received = Received()
        let splice = IsoVideoSplice(wanted: { .encoder }, forward: { item in received.items.withLock { $0.append(item) } })
        splice.expect(.encoder)
        splice.deliver(.format(Self.description(.h264, generation: 0)), from: .encoder)
        splice.deliver(.packet(Self.packet(1, generation: 0)), from: .encoder)
        // A mid-show fallback to x264: generation 1, as the encoder numbered it.
        splice.deliver(.format(Self.description(.h264, generation: 1)), from: .encoder)
        splice.deliver(.packet(Self.packet(2, generation: 1)), from: .encoder)
        splice.deliver(.endOfStream, from: .encoder)
        #expect(received.formats.map(\.generation) == [0, 1])
        #expect(received.packets.map(\.generation) == [0, 1])
        #expect(received.ends == 1)
        #expect(splice.statistics == .init(active: .encoder, generation: 1, handovers: 0))
    }
}
