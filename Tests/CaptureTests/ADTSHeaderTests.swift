import Testing
@testable import Capture

/// An AAC frame's ADTS header read for the ISO's copy of a network camera's sound (MPEG-TS carries AAC
/// in ADTS; Matroska wants raw frames and the AudioSpecificConfig).
@Suite struct ADTSHeaderTests {
    /// AAC LC, 48 kHz (index 3), stereo, no CRC, a 371-byte frame: the header ffmpeg's ADTS muxer writes.
    @Test func aHeaderGivesItsLengthAndTheAudioSpecificConfig() {
        let frameLength = 371
        let bytes: [UInt8] = [0xFF, 0xF1, 0x4C, 0x80 | UInt8(frameLength >> 11), UInt8((frameLength >> 3) & 0xFF), UInt8((frameLength & 7) << 5) | 0x1F, 0xFC]
        let header = bytes.withUnsafeBufferPointer { ADTSHeader($0) }
        // Object type 2 (LC), frequency index 3, channels 2: 00010 0011 0010 000.
        #expect(header == ADTSHeader(length: 7, frameLength: 371, audioSpecificConfig: [0x11, 0x90]))
        // With a CRC the header is 9 bytes.
        var protected = bytes
        protected[1] = 0xF0
        #expect(protected.withUnsafeBufferPointer { ADTSHeader($0) }?.length == 9)
        // Not ADTS (a raw AAC frame from FLV): nil.
        #expect([UInt8]([0x21, 0x10, 0x04, 0x60, 0x8C, 0x1C, 0x00]).withUnsafeBufferPointer { ADTSHeader($0) } == nil)
    }
}
