import Foundation
import Testing
import Control
import StudioCore
import StudioViews

/// The arguments the CLI builds for `audio` and `picture` read on the server as what the CLI meant: the
/// same type encodes on one end and decodes on the other, including the spellings that are not plain
/// JSON numbers (`-inf`, `mono`, a crop of `none`).
@Suite struct CommandArgumentsTests {
    static func roundTrip<Value: Codable>(_ value: Value) throws -> (Value, JSONValue) {
        let json = try JSONValue(encoding: value)
        return (try json.decode(Value.self), json)
    }

    @Test func audioArgumentsKeepTheirSpellings() throws {
        var arguments = AudioArguments(input: "mic1")
        arguments.gain = .init(decibels: -.infinity)
        arguments.pan = .mono
        arguments.delay = 40
        arguments.follow = "none"
        let (back, json) = try Self.roundTrip(arguments)
        #expect(json["gain"] == "-inf" && json["pan"] == "mono" && json["delay"]?.doubleValue == 40, "\(json)")
        #expect(back.input == "mic1" && back.gain?.decibels == -.infinity && back.delay == 40 && back.follow == "none")
        guard case .mono = back.pan else { Issue.record("pan \(String(describing: back.pan))"); return }
        #expect(back.setsInputOnly)

        var master = AudioArguments(input: "master")
        master.gain = .init(decibels: -3)
        master.pan = .position(-0.5)
        let (masterBack, masterJSON) = try Self.roundTrip(master)
        #expect(masterJSON["gain"]?.doubleValue == -3 && masterJSON["pan"]?.doubleValue == -0.5 && masterJSON["mute"] == nil, "\(masterJSON)")
        guard case .position(let position) = masterBack.pan else { Issue.record("pan \(String(describing: masterBack.pan))"); return }
        #expect(position == -0.5 && masterBack.gain?.decibels == -3)
        // What a script may send by hand reads the same: "off" for -inf, a number as text.
        let typed = try JSONValue(parsing: #"{"input": "mic2", "gain": "off", "pan": "0.25"}"#).decode(AudioArguments.self)
        #expect(typed.gain?.decibels == -.infinity)
        guard case .position(0.25) = typed.pan else { Issue.record("pan \(String(describing: typed.pan))"); return }
        #expect(throws: DecodingError.self) { try JSONValue(parsing: #"{"gain": "loud"}"#).decode(AudioArguments.self) }
    }

    @Test func pictureArgumentsKeepACropOfNoneApartFromNoCrop() throws {
        var arguments = PictureArguments(camera: "cam1", reset: true)
        arguments.crop = .some(nil)
        arguments.mirror = false
        arguments.beauty = 40
        let (back, json) = try Self.roundTrip(arguments)
        #expect(json["crop"] == "none" && json["reset"] == .bool(true) && json["mirror"] == .bool(false) && json["beauty"]?.intValue == 40, "\(json)")
        #expect(back.crop == .some(nil) && back.reset && back.mirror == false && back.beauty == 40 && back.changes)

        var cropped = PictureArguments(camera: "cam2")
        cropped.crop = .some(RelativeRect(x: 0, y: 0, width: 0.5, height: 1))
        let (croppedBack, croppedJSON) = try Self.roundTrip(cropped)
        #expect(croppedJSON["crop"]?.arrayValue?.count == 4 && croppedJSON["reset"] == nil, "\(croppedJSON)")
        #expect(croppedBack.crop == .some(RelativeRect(x: 0, y: 0, width: 0.5, height: 1)) && !croppedBack.reset)

        let showOnly = try Self.roundTrip(PictureArguments(camera: "cam1")).0
        #expect(showOnly.crop == nil && !showOnly.changes, "no crop given is not a crop of none")
    }
}
