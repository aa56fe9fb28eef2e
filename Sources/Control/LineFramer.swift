/// Splits a byte stream into newline-terminated messages of at most `limit` bytes.
///
/// A message longer than the limit yields one `.tooLarge` as soon as it passes the limit; its bytes are
/// then discarded up to and including the next newline, and framing resumes after it. So a bad client
/// costs at most `limit` bytes of memory and never desynchronises the stream. A trailing `\r` is
/// removed (clients that send CRLF work); blank lines are skipped.
struct LineFramer {
    enum Piece: Equatable {
        case line([UInt8])
        case tooLarge
    }

    let limit: Int
    private var buffer: [UInt8] = []
    private var discarding = false

    init(limit: Int) {
        precondition(limit > 0)
        self.limit = limit
    }

    /// True while part of a message has arrived without its newline.
    var hasPartialMessage: Bool { !buffer.isEmpty || discarding }

    mutating func append(_ bytes: UnsafeRawBufferPointer) -> [Piece] {
        var pieces: [Piece] = []
        var start = 0
        let count = bytes.count
        while start < count {
            var newline = start
            while newline < count && bytes[newline] != 0x0A { newline += 1 }
            let foundNewline = newline < count
            if discarding {
                if foundNewline { discarding = false }
            } else {
                let segmentLength = newline - start
                if buffer.count + segmentLength > limit {
                    pieces.append(.tooLarge)
                    buffer.removeAll(keepingCapacity: false)
                    discarding = !foundNewline
                } else {
                    buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<newline]))
                    if foundNewline {
                        if buffer.last == 0x0D { buffer.removeLast() }
                        if buffer.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) {
                            pieces.append(.line(buffer))
                        }
                        buffer.removeAll(keepingCapacity: true)
                    }
                }
            }
            start = foundNewline ? newline + 1 : count
        }
        return pieces
    }

    mutating func append(_ bytes: [UInt8]) -> [Piece] {
        bytes.withUnsafeBytes { append($0) }
    }
}
