import Foundation
import Testing
@testable import MediaSupport

/// SHA-256 through libavutil: the standard's test vectors, the same digest a slice at a time, a prefix,
/// and a clear failure for a missing file or one shorter than the length asked for.
@Suite struct FileDigestTests {
    static func file(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("digest-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func knownVectorsAndSlices() throws {
        let abc = try Self.file(Array("abc".utf8))
        defer { unlink(abc) }
        #expect(try FileDigest.sha256(of: abc) == FileDigest(sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", bytes: 3))
        let empty = try Self.file([])
        defer { unlink(empty) }
        #expect(try FileDigest.sha256(of: empty).sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")

        // 3 MiB of a pattern: hashed in 100 000-byte slices, the same as in one go; its first 3 bytes "abc".
        let big = try Self.file(Array("abc".utf8) + (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        defer { unlink(big) }
        let whole = try FileDigest.sha256(of: big)
        let hasher = try FileDigest.Hasher(path: big)
        var sliced: FileDigest?
        var steps = 0
        while sliced == nil { sliced = try hasher.step(bytes: 100_000); steps += 1 }
        #expect(sliced == whole && whole.bytes == 3 + (3 << 20) && steps > 30)
        #expect(try FileDigest.sha256(of: big, length: 3).sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")

        #expect(throws: FileDigest.Failure.self) { try FileDigest.sha256(of: abc, length: 4) }
        let missing = #expect(throws: FileDigest.Failure.self) { try FileDigest.sha256(of: "/nonexistent/file") }
        #expect(missing?.description.contains("cannot open /nonexistent/file") == true)
    }
}
