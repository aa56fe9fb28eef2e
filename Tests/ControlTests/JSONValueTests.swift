import Foundation
import StudioCore
import Testing
@testable import Control

@Suite struct JSONValueTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue(parsing: #"{"a": null, "b": true, "c": 42, "d": 4.5, "e": "x\"y", "f": [1, "two"], "g": {"h": -3}}"#)
        #expect(value["a"] == .null)
        #expect(value["b"]?.boolValue == true)
        #expect(value["c"]?.intValue == 42)
        #expect(value["d"]?.doubleValue == 4.5)
        #expect(value["d"]?.intValue == nil)
        #expect(value["e"]?.stringValue == "x\"y")
        #expect(value["f"]?[1]?.stringValue == "two")
        #expect(value["f"]?[2] == nil)
        #expect(value["g"]?["h"]?.intValue == -3)
        #expect(value["missing"] == nil)
        #expect(value["f"]?.arrayValue?.count == 2)
        #expect(value.objectValue?.count == 7)
    }

    @Test func integersAndNumbersCompareByValue() {
        #expect(JSONValue.int(2) == JSONValue.number(2))
        #expect(JSONValue.number(2.5) != JSONValue.int(2))
        #expect(JSONValue.number(3).intValue == 3)
        #expect(JSONValue.string("2") != JSONValue.int(2))
    }

    @Test func literalsBuildValues() {
        let value: JSONValue = ["name": "cam1", "live": true, "fps": 29.97, "index": 1, "tags": ["a", nil]]
        #expect(value["name"] == .string("cam1"))
        #expect(value["live"] == .bool(true))
        #expect(value["fps"] == .number(29.97))
        #expect(value["index"] == .int(1))
        #expect(value["tags"] == .array([.string("a"), .null]))
    }

    @Test func serializesCompactSortedAndEscaped() throws {
        let value: JSONValue = ["b": 1, "a": ["x\ny\u{01}\"\\", 2.5, nil, false]]
        let text = value.jsonText
        #expect(text == #"{"a":["x\ny\u0001\"\\",2.5,null,false],"b":1}"#)
        #expect(!text.contains("\n"))
        #expect(try JSONValue(parsing: text) == value)
        #expect(JSONValue.number(.nan).jsonText == "null")
        #expect(JSONValue.number(3).jsonText == "3")
    }

    @Test func codableRoundTripThroughFoundation() throws {
        let value: JSONValue = ["list": [1, 2.5, "s", true, nil], "nested": ["k": "v"]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }

    @Test func malformedTextThrows() {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: "{\"a\": ") }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: "not json") }
        do {
            _ = try JSONValue(parsing: "[1,")
            Issue.record("expected an error")
        } catch {
            #expect(error.description.hasPrefix("malformed JSON"))
        }
    }

    @Test func studioEventConversion() throws {
        let event = StudioEvent(kind: .switchProgram, camera: "cam2", wallTime: Date(timeIntervalSince1970: 1_700_000_000.25),
                                programTime: .milliseconds(1234), details: ["from": "cam1"])
        let value = try JSONValue(encoding: EventView(event))
        #expect(value["kind"] == "switch")
        #expect(value["camera"] == "cam2")
        #expect(value["program_ms"] == 1234)
        #expect(value["details"]?["from"] == "cam1")
        #expect(value["wall_time"]?.stringValue == "2023-11-14T22:13:20.250Z")
        let bare = try JSONValue(encoding: EventView(StudioEvent(kind: .sessionStarted)))
        #expect(bare["camera"] == .null && bare["program_ms"] == .null)
        #expect(bare["id"] == nil && bare["session"] == nil, "a broadcast event has no id or session")
        #expect(value.jsonText == #"{"camera":"cam2","details":{"from":"cam1"},"kind":"switch","program_ms":1234,"wall_time":"2023-11-14T22:13:20.250Z"}"#)
        #expect(try value.decode(EventView.self) == EventView(event))
    }

    @Test func encodingConvertsCodableValues() throws {
        struct Status: Codable { var camera: String; var fps: Int }
        #expect(try JSONValue(encoding: Status(camera: "cam1", fps: 30)) == ["camera": "cam1", "fps": 30])
    }
}
