import Testing
@testable import Control

@Suite struct FramingTests {
    private func text(_ pieces: [LineFramer.Piece]) -> [String] {
        pieces.map { piece in
            switch piece {
            case .line(let bytes): return String(decoding: bytes, as: UTF8.self)
            case .tooLarge: return "<too large>"
            }
        }
    }

    @Test func splitsLinesAcrossChunksAndStripsCR() {
        var framer = LineFramer(limit: 100)
        #expect(text(framer.append(Array("{\"a\":".utf8))) == [])
        #expect(framer.hasPartialMessage)
        #expect(text(framer.append(Array("1}\r\n\n  \n{\"b\":2}\n{\"c\"".utf8))) == ["{\"a\":1}", "{\"b\":2}"])
        #expect(text(framer.append(Array(":3}\n".utf8))) == ["{\"c\":3}"])
        #expect(!framer.hasPartialMessage)
    }

    @Test func limitIsInclusiveAndOversizedIsDiscardedToTheNewline() {
        var framer = LineFramer(limit: 8)
        #expect(text(framer.append(Array("12345678\n".utf8))) == ["12345678"])
        #expect(text(framer.append(Array("123456789\nok\n".utf8))) == ["<too large>", "ok"])
        // Oversized and spread over several chunks: one error, then the rest is skipped.
        #expect(text(framer.append(Array("12345".utf8))) == [])
        #expect(text(framer.append(Array("67890".utf8))) == ["<too large>"])
        #expect(text(framer.append(Array("more garbage without end".utf8))) == [])
        #expect(framer.hasPartialMessage)
        #expect(text(framer.append(Array("tail\nnext\n".utf8))) == ["next"])
        #expect(!framer.hasPartialMessage)
    }
}
