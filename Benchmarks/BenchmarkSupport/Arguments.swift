import Foundation

/// A benchmark tool's command line: positional words, the first required (else the usage line and exit
/// 2), the others optional with defaults. Indices are `CommandLine.arguments`' (1 is the first word).
public struct BenchmarkArguments {
    private let words = CommandLine.arguments

    /// Exits with `usage` when the first word is missing.
    public init(usage: String) {
        guard words.count >= 2 else {
            FileHandle.standardError.write(Data("usage: \(usage)\n".utf8))
            exit(2)
        }
    }

    /// The first word (the one the usage requires).
    public var first: String { words[1] }

    /// Word `index`, or nil when it was not given.
    public subscript(_ index: Int) -> String? { index < words.count ? words[index] : nil }

    /// Word `index` as a whole number; `fallback` when missing or not a number.
    public func int(_ index: Int, default fallback: Int) -> Int { self[index].flatMap { Int($0) } ?? fallback }

    /// Word `index` as a number; `fallback` when missing or not a number.
    public func double(_ index: Int, default fallback: Double) -> Double { self[index].flatMap { Double($0) } ?? fallback }
}
