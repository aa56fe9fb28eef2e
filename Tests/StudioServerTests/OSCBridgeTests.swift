import Foundation
import Testing
import Control
import StudioViews
import TallyOut
@testable import StudioServer

/// OSC addresses come from the commands' own POST routes and positional arguments; docs/control-surfaces.md
/// lists the same. A message becomes the request the CLI would send.
@Suite struct OSCBridgeTests {
    static let bridge = OSCBridge(ServerCommands.all)

    @Test func theDocumentListsEveryAddressInOrder() throws {
        let documented = try DocumentTables.firstCells(of: "docs/control-surfaces.md", section: "OSC addresses")
        #expect(documented == Self.bridge.routes.map(\.address))
        let commands = try DocumentTables.cells(of: "docs/control-surfaces.md", section: "OSC addresses", column: 1)
        #expect(commands == Self.bridge.routes.map(\.command))
        // The arguments column: the declared positional arguments, in order ("none" without; a note may follow).
        let arguments = try DocumentTables.cells(of: "docs/control-surfaces.md", section: "OSC addresses", column: 2)
            .map { $0.split(separator: "(").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
        #expect(arguments == Self.bridge.routes.map { $0.positional.isEmpty ? "none" : $0.positional.joined(separator: ", ") })
        #expect(Self.bridge.routes.map(\.address).contains("/studio/player/{player}/play"))
        #expect(!Self.bridge.routes.map(\.command).contains("status"), "reads are not mapped")
    }

    @Test func argumentKindsComeFromTheArgumentTypes() {
        #expect(SwitcherCommands.Switch.argumentKinds == ["source": .string, "camera": .string])
        #expect(SwitcherCommands.Overlay.argumentKinds == ["name": .string, "on": .bool])
        #expect(SwitcherCommands.Auto.argumentKinds == ["kind": .string, "frames": .integer, "ms": .integer])
        let audio = AudioCommands.Audio.argumentKinds
        #expect(audio["gain"] == .number && audio["mute"] == .bool && audio["pan"] == .number && audio["follow"] == .string, "\(audio)")
        // Past an argument of its own type (crop, a rectangle), the others are still read.
        let picture = PictureCommands.Picture.argumentKinds
        #expect(picture["crop"] == .other && picture["brightness"] == .number && picture["mirror"] == .bool && picture["gamma"] == .number, "\(picture)")
    }

    static func request(_ address: String, _ arguments: [OSCArgument] = []) -> Result<ControlRequest, OSCBridgeRefusal> {
        bridge.request(OSCMessage(address, arguments))
    }

    static func arguments(_ address: String, _ arguments: [OSCArgument] = []) -> [String: JSONValue]? {
        guard case .success(let request) = request(address, arguments) else { return nil }
        return request.arguments
    }

    @Test func messagesBecomeTheCLIsRequests() throws {
        #expect(try Self.request("/studio/switch", [.string("cam2")]).get() == ControlRequest(id: "osc", command: "switch", arguments: ["source": "cam2"], origin: "osc"))
        #expect(try Self.request("/studio/cut").get().command == "cut")
        #expect(Self.arguments("/studio/preview", [.string("cam1")]) == ["source": "cam1"])
        #expect(Self.arguments("/studio/auto", [.string("wipe"), .float32(500)]) == ["kind": "wipe", "ms": .int(500)])
        // An overlay on or off by T/F or a number (a TouchOSC button's 1.0 and 0.0), toggled without one.
        #expect(Self.arguments("/studio/overlay/lower", [.bool(false)]) == ["name": "lower", "on": false])
        #expect(Self.arguments("/studio/overlay/lower", [.float32(1)]) == ["name": "lower", "on": true])
        #expect(Self.arguments("/studio/overlay/lower", [.int32(0)]) == ["name": "lower", "on": false])
        #expect(Self.arguments("/studio/overlay/lower") == ["name": "lower"])
        // Audio: the gain in order, or any argument by name as the last segment.
        #expect(Self.arguments("/studio/audio/mic1", [.float32(-6)]) == ["input": "mic1", "gain": .number(-6)])
        #expect(Self.arguments("/studio/audio/mic1/gain", [.float32(-6)]) == ["input": "mic1", "gain": .number(-6)])
        #expect(Self.arguments("/studio/audio/mic1/mute", [.int32(1)]) == ["input": "mic1", "mute": true])
        #expect(Self.arguments("/studio/audio/mic1/gain", [.string("-inf")]) == ["input": "mic1", "gain": "-inf"])
        #expect(Self.arguments("/studio/player/intro/play", [.string("2")]) == ["player": "intro", "item": "2"])
        #expect(Self.arguments("/studio/scene/interview") == ["scene": "interview"])
    }

    @Test func unknownAddressesAndTooManyArgumentsAreRefused() {
        func refusal(_ address: String, _ arguments: [OSCArgument] = []) -> OSCServer.Refusal? {
            guard case .failure(let refused) = Self.request(address, arguments) else { return nil }
            return refused.refusal
        }
        #expect(refusal("/studio/status") == .unknownAddress)
        #expect(refusal("/studio/switc", [.string("cam2")]) == .unknownAddress)
        #expect(refusal("/studio/audio/mic1/gian", [.float32(1)]) == .unknownAddress)
        #expect(refusal("/studio//cut") == .unknownAddress)
        #expect(refusal("/studio/cut", [.float32(1)]) == .invalidArgument)
        #expect(refusal("/studio/audio/mic1/mute", [.bool(true), .bool(false)]) == .invalidArgument)
        // A number for a string goes as a number: the command says what is wrong, as to the CLI.
        #expect(Self.arguments("/studio/switch", [.int32(2)]) == ["source": .int(2)])
    }
}
