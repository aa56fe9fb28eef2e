import Foundation
import Testing
import Capture
import FrameDrawing
import Switcher
import StudioCore
import StudioSystem
import TestSupport

/// A player's item with alpha (made by ffmpeg: `StingClips`, its left half opaque grey of luma 40 on its
/// first picture, its right half transparent), cued, as a layer of a scene over a camera of one colour:
/// keyed over it, with the layer's opacity; full screen on program, over black.
@Suite(.serialized) struct PlayerAlphaTests {
    static let blue = YUVColor(red: 30, green: 30, blue: 220)
    /// The clip's first picture where it is opaque.
    static let grey = YUVColor(y: UInt8(StingClips.luma(0)), u: 128, v: 128)
    static let black = YUVColor(y: 16, u: 128, v: 128)

    /// A scene of the blue camera full frame and the player `clip` over it in `rect`, at `opacity`.
    static func scene(_ name: String, rect: LayerRect = .fraction(RelativeRect(x: 0, y: 0, width: 1, height: 1)),
                      opacity: Double = 1) -> SceneDescription {
        SceneDescription(name: name, layout: nil, layers: [
            LayerDescription(source: .camera("cam"), rect: .fraction(RelativeRect(x: 0, y: 0, width: 1, height: 1))),
            LayerDescription(source: .camera("clip"), rect: rect, opacity: opacity),
        ])
    }

    /// A rig with the player `clip` on `path` on program and the blue camera `cam`, with `scenes`.
    static func rig(_ path: String, scenes: [SceneDescription]) throws -> PlayerProgramRig {
        try PlayerProgramRig([PlayerSpec(name: "clip", items: [path])], colours: [("cam", blue)], scenes: scenes)
    }

    /// Puts `scene` on program and runs the program past it.
    static func show(_ scene: String, on rig: PlayerProgramRig) throws {
        let reply = LatestValue<Result<SwitchOutcome, SwitchError>>()
        rig.switcher.switchProgram(to: .scene(scene)) { reply.publish($0) }
        try rig.run(to: rig.tick + 2)
        _ = try #require(reply.waitForNewer(than: 0, timeoutSeconds: 10).value, "no reply").get()
    }

    static func expect(_ colour: YUVColor, near wanted: YUVColor, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(colour.distance(to: wanted) <= 6, "\(what): \(colour), wanted \(wanted)", sourceLocation: sourceLocation)
    }

    /// The clip as each codec with alpha, and as a PNG still with transparency.
    static let items: [(file: String, arguments: [String])] = StingClips.formats
        + [("still.png", ["-frames:v", "1", "-update", "1", "-pix_fmt", "rgba"])]

    @Test(arguments: items.indices)
    func anItemWithAlphaIsKeyedOverTheLayerBelowAndOverBlackFullScreen(_ index: Int) throws {
        let item = Self.items[index]
        try PlayerProgramRig.withClips { directory in
            let path = directory.appendingPathComponent(item.file).path
            try StingClips.make(path, item.arguments)
            let rig = try Self.rig(path, scenes: [Self.scene("key")])
            #expect(rig.players[0].frames.latest().value?.format == .yuva420p, "\(item.file)")
            // Full screen on program (the rig's start): over black.
            Self.expect(try rig.colour(at: 80, 90), near: Self.grey, "\(item.file) full screen, opaque")
            Self.expect(try rig.colour(at: 240, 90), near: Self.black, "\(item.file) full screen, transparent")
            try Self.show("key", on: rig)
            Self.expect(try rig.colour(at: 80, 90), near: Self.grey, "\(item.file) in a scene, opaque")
            Self.expect(try rig.colour(at: 240, 90), near: Self.blue, "\(item.file) in a scene, transparent")
        }
    }

    @Test func atHalfOpacityTheOpaquePartIsHalfTheClipHalfTheLayerBelow() throws {
        try PlayerProgramRig.withClips { directory in
            let path = directory.appendingPathComponent("qtrle.mov").path
            try StingClips.make(path, ["-pix_fmt", "argb", "-c:v", "qtrle"])
            let rig = try Self.rig(path, scenes: [Self.scene("half", opacity: 0.5)])
            try Self.show("half", on: rig)
            let mix = YUVColor(y: UInt8((Int(Self.grey.y) + Int(Self.blue.y)) / 2), u: UInt8((Int(Self.grey.u) + Int(Self.blue.u)) / 2),
                               v: UInt8((Int(Self.grey.v) + Int(Self.blue.v)) / 2))
            Self.expect(try rig.colour(at: 80, 90), near: mix, "opaque at half opacity")
            Self.expect(try rig.colour(at: 240, 90), near: Self.blue, "transparent at half opacity")
        }
    }

    @Test func aLayerSmallerThanTheClipIsScaledWithItsAlpha() throws {
        try PlayerProgramRig.withClips { directory in
            let path = directory.appendingPathComponent("prores.mov").path
            try StingClips.make(path, ["-c:v", "prores_ks", "-profile:v", "4444", "-pix_fmt", "yuva444p10le"])
            let rig = try Self.rig(path, scenes: [Self.scene("small", rect: .pixels(x: 0, y: 0, width: 160, height: 90))])
            try Self.show("small", on: rig)
            Self.expect(try rig.colour(at: 40, 44), near: Self.grey, "the small layer, opaque")
            Self.expect(try rig.colour(at: 120, 44), near: Self.blue, "the small layer, transparent")
            Self.expect(try rig.colour(at: 240, 130), near: Self.blue, "outside the layer")
        }
    }

    @Test func anItemWithoutAlphaStaysI420AndCoversTheLayerBelow() throws {
        try PlayerProgramRig.withClips { directory in
            let path = directory.appendingPathComponent("opaque.mp4").path
            try StingClips.make(path, ["-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast", "-crf", "10"])
            let rig = try Self.rig(path, scenes: [Self.scene("key")])
            #expect(rig.players[0].frames.latest().value?.format == .i420)
            try Self.show("key", on: rig)
            // Its transparent half lost its alpha in H.264 (its colour, the same grey, kept): it covers the camera.
            Self.expect(try rig.colour(at: 80, 90), near: Self.grey, "opaque clip, left")
            Self.expect(try rig.colour(at: 240, 90), near: Self.grey, "opaque clip, right")
        }
    }
}
