import CFFmpeg

/// What the first bytes of an image file say: PNG or JPEG, and the picture's size. Read before
/// decoding, so a file that is not an image, or a picture beyond `GraphicsLimits`, is refused with its
/// own size in the message and without libavcodec allocating for it.
struct ImageHeader: Equatable {
    enum Kind: Equatable {
        case png, jpeg

        /// The libavcodec decoder of this kind.
        var codecID: AVCodecID { self == .png ? AV_CODEC_ID_PNG : AV_CODEC_ID_MJPEG }
    }

    var kind: Kind
    var width: Int
    var height: Int

    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Reads the kind and size from the start of a file's bytes; `path` only names the file in errors.
    static func read(_ bytes: UnsafeRawBufferPointer, path: String) throws(GraphicsError) -> ImageHeader {
        func be16(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
        func be32(_ at: Int) -> Int { be16(at) << 16 | be16(at + 2) }

        if bytes.count >= 8, bytes.prefix(8).elementsEqual(pngSignature) {
            // The first chunk is IHDR: length (4), type (4), width (4), height (4), all big-endian.
            guard bytes.count >= 24, bytes[12..<16].elementsEqual("IHDR".utf8) else {
                throw .notAnImage(path: path, reason: "the PNG has no header (IHDR) chunk")
            }
            return ImageHeader(kind: .png, width: be32(16), height: be32(20))
        }
        if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF {
            // Segments up to the first start-of-frame marker (SOF0...SOF15 except DHT C4, JPG C8, DAC CC):
            // FF, marker, big-endian length including itself, then for SOF precision (1), height, width.
            var index = 2
            while index + 4 <= bytes.count {
                guard bytes[index] == 0xFF else { break }
                while index < bytes.count, bytes[index] == 0xFF { index += 1 }
                guard index + 3 <= bytes.count else { break }
                let marker = bytes[index]
                index += 1
                if marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }
                if marker == 0xD9 || marker == 0xDA { break }
                let length = be16(index)
                if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                    guard index + 7 <= bytes.count else { break }
                    return ImageHeader(kind: .jpeg, width: be16(index + 5), height: be16(index + 3))
                }
                index += length
            }
            throw .notAnImage(path: path, reason: "the JPEG has no frame header (SOF) with the picture size")
        }
        throw .notAnImage(path: path, reason: "it starts with neither the PNG nor the JPEG signature")
    }
}
