import Foundation
import StudioCore
import Control

extension EventView {
    /// Appends the event's JSON to `output`: the same text as `JSONValue(encoding: self).jsonText`
    /// (keys sorted; `camera` and `program_ms` null when absent, `id` and `session` left out), written
    /// directly. `studio log --json` writes every row so: through the encoder, a row took a `JSONEncoder`
    /// pass, a parse back and a dictionary tree (docs/benchmarks.md, the history). A test compares the two.
    public func writeJSON(to output: inout String) {
        output += "{\"camera\":"
        if let camera { JSONValue.string(camera).write(to: &output) } else { output += "null" }
        output += ",\"details\":{"
        var first = true
        for key in details.keys.sorted() {
            if !first { output += "," }
            first = false
            JSONValue.string(key).write(to: &output)
            output += ":"
            JSONValue.string(details[key]!).write(to: &output)
        }
        output += "}"
        if let id { output += ",\"id\":" + String(id) }
        output += ",\"kind\":"
        JSONValue.string(kind.rawValue).write(to: &output)
        output += ",\"program_ms\":" + (programMilliseconds.map { String($0) } ?? "null")
        if let session { output += ",\"session\":" + String(session) }
        output += ",\"wall_time\":\"" + ISO8601Time.format(wallTime) + "\"}"
    }
}
