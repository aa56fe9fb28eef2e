import Testing
import StudioCore

/// Secrets compared in constant time: equal only when every byte and the length agree, a secret padded
/// with NUL bytes included (lengths 256 apart once compared equal when the length was folded into a byte).
@Suite struct SecretComparisonTests {
    @Test func equalOnlyWhenEveryByteAndTheLengthAgree() {
        let key = Array("7c1e2a9b5d3f".utf8)
        #expect(SecretComparison.equal(key, key))
        #expect(!SecretComparison.equal(key, Array("7c1e2a9b5d3e".utf8)))
        #expect(!SecretComparison.equal(key, key + [0]))
        #expect(!SecretComparison.equal(key, key + [UInt8](repeating: 0, count: 256)))
        #expect(!SecretComparison.equal([], [0]))
        #expect(SecretComparison.equal([], []))
    }
}
