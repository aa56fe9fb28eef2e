import Foundation
import Testing
import Control
import StudioCore
import StudioViews

/// `studio log --json` writes each event with `EventView.writeJSON`, not through the encoder: the same bytes.
@Suite struct EventJSONTests {
    @Test func theDirectJSONIsTheEncodersText() throws {
        let time = Date(timeIntervalSince1970: 1_714_586_584.123)
        let events = [
            EventView(id: 7, session: 3, kind: .switchProgram, camera: "cam2", wallTime: time, programMilliseconds: 41_000,
                      details: ["from": "cam1", "reason": "operator"]),
            EventView(id: 1_234_567_890_123, session: 1, kind: EventKind(rawValue: "camera_lost"), camera: nil, wallTime: time,
                      programMilliseconds: nil, details: [:]),
            EventView(kind: EventKind(rawValue: "frames_dropped"), camera: "caméra \"3\"\n", wallTime: Date(timeIntervalSince1970: -1.5),
                      programMilliseconds: -5, details: ["z": "tab\there", "a": "\u{01}ctl \\ / \u{2028} 🎥", "é": ""]),
        ]
        for event in events {
            var direct = ""
            event.writeJSON(to: &direct)
            #expect(direct == (try JSONValue(encoding: event)).jsonText)
        }
    }
}
