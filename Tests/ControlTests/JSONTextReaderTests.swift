import Foundation
import Testing
@testable import Control

/// `JSONValue(encoding:)` reads the encoder's text with `JSONTextReader`: the same values, and the same text, as
/// Foundation's `JSONDecoder` made of it before.
@Suite struct JSONTextReaderTests {
    struct Sample: Encodable {
        var text: String
        var whole: Int64
        var fraction: Double
        var integral: Double
        var huge: Double
        var negative: Int
        var flag: Bool
        var list: [String]
        var nested: [String: [Int]]
        var date: Date
        @Nullable var missing: String?
        var absent: String?
    }

    static let samples: [Sample] = [
        Sample(text: "plain", whole: 7, fraction: 2.5, integral: 2, huge: 1e300, negative: -42, flag: true, list: [], nested: [:],
               date: Date(timeIntervalSince1970: 1_714_586_584.123), missing: nil, absent: nil),
        Sample(text: "quote \" backslash \\ slash / newline \n tab \t cr \r bell \u{07} bs \u{08} ff \u{0C} nul \u{00} é 🎥 \u{2028} \u{2029}",
               whole: Int64.max, fraction: -0.000123, integral: -0.0, huge: 9_007_199_254_740_993, negative: Int.min, flag: false,
               list: ["a", "", "ü\u{1F}"], nested: ["x": [1, -2, 3], "_": []], date: Date(timeIntervalSince1970: 0), missing: "here", absent: "there"),
    ]

    @Test func theReaderMakesWhatTheDecoderMade() throws {
        for sample in Self.samples {
            let data = try ControlCoding.encoder.encode(sample)
            let read = try #require(JSONTextReader.read(data), "the reader takes the encoder's text: \(String(decoding: data, as: UTF8.self))")
            let decoded = try JSONDecoder().decode(JSONValue.self, from: data)
            #expect(read == decoded, "\(read.jsonText)\n\(decoded.jsonText)")
            #expect(read.jsonText == decoded.jsonText)
            #expect(try JSONValue(encoding: sample) == decoded)
        }
    }

    @Test func textItDoesNotExpectIsLeftToTheDecoder() {
        for text in ["", "{", "{\"a\":}", "[1,]", "\"\\x\"", "\"\\ud800\"", "tru", "1 2", "{\"a\" 1}", "-", "\"open"] {
            let read = JSONTextReader.read(Data(text.utf8))
            #expect(read == Optional<JSONValue>.none, "\(text): \(String(describing: read))")
        }
        #expect(JSONTextReader.read(Data(" {\"a\": [1, 2.5, \"\\u00e9\\ud83c\\udfa5\"]} ".utf8)) == .object(["a": .array([.int(1), .number(2.5), .string("é🎥")])]))
    }
}
