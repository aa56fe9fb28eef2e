#if canImport(Glibc)
import Glibc
#endif

/// What a test source sent, frame by frame (`pw-virtual-camera --log-frames PATH`): one line per
/// frame, `SEQUENCE BYTES DIGEST TIME`, the digest a 64-bit FNV-1a of the frame's bytes in hex, the
/// time CLOCK_MONOTONIC nanoseconds when it was handed to the stream. Each line
/// goes to the file with one write(2), so a reader sees whole lines even while the source runs or after
/// it was killed. A test then checks that a recording holds these very bytes.
public final class SentFrameLog {
    private let descriptor: Int32

    /// Creates (truncates) `path`; nil when it cannot be opened.
    public init?(path: String) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if descriptor < 0 { return nil }
    }

    deinit { close(descriptor) }

    public func append(sequence: Int64, bytes: [UInt8], time: UInt64) {
        let line = Array("\(sequence) \(bytes.count) \(String(Self.digest(bytes), radix: 16)) \(time)\n".utf8)
        _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// 64-bit FNV-1a: enough to tell frames apart, no library needed.
    public static func digest(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { buffer in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in buffer { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return hash
        }
    }

    /// The frames a log holds (digest and time), in the order sent (a last line cut short is left out).
    public static func entries(atPath path: String) -> [(digest: UInt64, time: UInt64)] {
        guard let file = fopen(path, "r") else { return [] }
        defer { fclose(file) }
        var result: [(digest: UInt64, time: UInt64)] = []
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0, let line {
            let text = String(cString: line)
            guard text.hasSuffix("\n") else { break }
            let fields = text.dropLast().split(separator: " ")
            guard fields.count == 4, let digest = UInt64(fields[2], radix: 16), let time = UInt64(fields[3]) else { continue }
            result.append((digest, time))
        }
        return result
    }
}
