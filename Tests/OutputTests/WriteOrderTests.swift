import Foundation
import Testing
import StudioCore
import Encoding
import TestSupport
@testable import Output

/// A network output (FLV over RTMP) hands each packet to the protocol as it comes. libavformat's
/// interleaver would keep video until audio with a later timestamp came, and the program audio runs
/// about 0.1 s behind the clock: every frame would reach the wire that much later (issue 15).
@Suite struct WriteOrderTests {
    @Test func aNetworkOutputWritesVideoWithoutWaitingForAudio() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let video = try X264Encoder(settings: testSettings), audio = try AACEncoder()
        var packets: [EncodedPacket] = []
        for n in 0..<10 {
            let frame = SyntheticMedia.frame(width: testSettings.width, height: testSettings.height, yuv: ProgramFeed.colour(n), index: n)
            packets += try video.encode(frame, pts: MediaTime(count: Int64(n), rate: testSettings.frameRate), forceKeyframe: n == 0)
        }
        try #require(packets.count >= 5, "x264 zerolatency: a packet per frame")
        // No audio packet at all, as while the audio is still on its way: the FLV muxer gets the video.
        let muxer = try Muxer(format: "flv", url: directory.appendingPathComponent("out.flv").path, isNetwork: true,
                              video: video.streamDescription, audio: audio.streamDescription, interrupt: InterruptState(),
                              connectTimeout: nil, ioTimeout: nil)
        let afterHeader = muxer.bytesWritten
        var videoBytes: Int64 = 0
        for packet in packets {
            #expect(try muxer.write(packet))
            videoBytes += Int64(packet.data.count)
            #expect(muxer.bytesWritten >= afterHeader + videoBytes, "packet at \(packet.pts) held back")
        }
        muxer.close(writeTrailer: true)
    }
}
