import Testing
import TestSupport
@testable import TallyOut

/// The OSC codec against packets built by python3's struct from the 1.0 layout (osc_packet.py), and
/// against malformed ones: each refused with its reason, none half-read.
@Suite struct OSCPacketTests {
    @Test func decodesEveryTypeAndNestedBundlesBuiltElsewhere() throws {
        let message = try OSCPacket.decode(try OSCPeer.encode(#"["/studio/audio/mic1/gain", ["f", -6.5], ["i", -3], ["s", "cäm"], ["h", 5000000000], ["d", 0.25], ["T"], ["F"], ["N"]]"#))
        #expect(message == .message(OSCMessage("/studio/audio/mic1/gain",
                                               [.float32(-6.5), .int32(-3), .string("cäm"), .int64(5_000_000_000), .float64(0.25), .bool(true), .bool(false), .null])))

        let bundle = try OSCPacket.decode(try OSCPeer.encode(#"{"time": 7, "elements": [["/studio/cut"], {"elements": [["/studio/switch", ["s", "cam2"]], {"elements": []}]}]}"#))
        #expect(bundle == .bundle(timeTag: 7, elements: [
            .message(OSCMessage("/studio/cut")),
            .bundle(timeTag: 1, elements: [.message(OSCMessage("/studio/switch", [.string("cam2")])), .bundle(timeTag: 1, elements: [])]),
        ]))
        #expect(bundle.messages.map(\.address) == ["/studio/cut", "/studio/switch"])
    }

    @Test func encodesWhatTheOtherSideReads() throws {
        let packet = OSCPacket.bundle(timeTag: 1, elements: [
            .message(OSCMessage("/studio/tally/program", [.string("cam2")])),
            .message(OSCMessage("/x", [.int32(1), .float32(-6), .int64(-2), .float64(1.5), .bool(true), .bool(false), .null, .string("abcd")])),
        ])
        #expect(try OSCPeer.decode(packet.encoded)
                == #"{"time": 1, "elements": [["/studio/tally/program", ["s", "cam2"]], ["/x", ["i", 1], ["f", -6.0], ["h", -2], ["d", 1.5], ["T"], ["F"], ["N"], ["s", "abcd"]]]}"#)
        #expect(try OSCPacket.decode(packet.encoded) == packet)
        // Bytes as the layout says: the address padded to 24, ",s" to 4, "cam2" plus its NUL to 8.
        let expected = try OSCPeer.encode(#"["/studio/tally/program", ["s", "cam2"]]"#)
        #expect(OSCPacket.message(OSCMessage("/studio/tally/program", [.string("cam2")])).encoded == expected)
    }

    @Test func aMessageWithoutTypeTagsHasNoArguments() throws {
        #expect(try OSCPacket.decode(Array("/studio/cut\0".utf8)) == .message(OSCMessage("/studio/cut")))
    }

    static func refusal(_ bytes: [UInt8]) -> String? {
        do { _ = try OSCPacket.decode(bytes); return nil } catch { return error.reason }
    }

    @Test func refusesMalformedPacketsWithTheReason() throws {
        let good = try OSCPeer.encode(#"["/studio/switch", ["s", "cam2"]]"#)
        #expect(Self.refusal([]) == "an empty packet")
        #expect(Self.refusal(Array(good.dropLast(2)))?.contains("not a multiple of 4") == true)
        // Truncated at a multiple of 4: the string argument lost its NUL.
        #expect(Self.refusal(Array(good.dropLast(4)))?.contains("argument 1 (s) has no terminating NUL") == true, "\(Self.refusal(Array(good.dropLast(4))) ?? "")")
        // Truncated in a number.
        let number = try OSCPeer.encode(#"["/a", ["h", 1]]"#)
        #expect(Self.refusal(Array(number.dropLast(4))) == "argument 1 (h): needs 8 bytes, 4 left")
        // Padding other than NULs.
        var padding = good
        padding[15] = 0x41
        #expect(Self.refusal(padding) == "the address is padded with bytes other than NUL")
        // A tag this decoder does not read (a blob), a type tag string without its comma, bytes left over.
        #expect(Self.refusal(Array("/a\0\0,b\0\0\0\0\0\u{4}abcd".utf8))?.contains("unknown or unsupported tag 'b'") == true)
        #expect(Self.refusal(Array("/a\0\0s\0\0\0".utf8)) == "the type tag string 's' does not start with ','")
        #expect(Self.refusal(Array("/a\0\0,\0\0\0abcd".utf8)) == "4 bytes after the last argument")
        #expect(Self.refusal(Array("abc\0".utf8)) == "neither a message (an address starting with /) nor a bundle (#bundle)")
        #expect(Self.refusal([0x2F, 0xFF, 0xFE, 0]) == "the address is not UTF-8")
    }

    @Test func refusesBundleGarbage() throws {
        let bundle = try OSCPeer.encode(#"{"elements": [["/studio/cut"], {"elements": [["/studio/switch", ["s", "cam2"]]]}]}"#)
        #expect(try OSCPacket.decode(bundle).messages.count == 2)
        // The first element claims more than there is (a huge size), or a size that is no multiple of 4, or none.
        var huge = bundle
        huge.replaceSubrange(16..<20, with: [0x7F, 0xFF, 0xFF, 0xF0])
        #expect(Self.refusal(huge)?.hasPrefix("a bundle element claims 2147483632 bytes, only") == true)
        var odd = bundle
        odd.replaceSubrange(16..<20, with: [0, 0, 0, 6])
        #expect(Self.refusal(odd) == "a bundle element's size 6 is not a positive multiple of 4")
        var empty = bundle
        empty.replaceSubrange(16..<20, with: [0, 0, 0, 0])
        #expect(Self.refusal(empty) == "a bundle element's size 0 is not a positive multiple of 4")
        #expect(Self.refusal(Array(bundle.prefix(12)))?.contains("the bundle's time tag: needs 8 bytes, 4 left") == true)
        // Garbage inside the nested bundle: its element is no message; named by where it is.
        var nested = bundle
        let inner = 16 + 4 + 16 + 4 + 16 + 4  // the outer header, /studio/cut with its size, the inner header, its element's size
        nested[inner] = UInt8(ascii: "x")
        #expect(Self.refusal(nested) == "bundle element 2: bundle element 1: neither a message (an address starting with /) nor a bundle (#bundle)")
        // Nesting deeper than the limit.
        var deep = #"["/a"]"#
        for _ in 0...OSCPacket.maximumDepth { deep = #"{"elements": [\#(deep)]}"# }
        #expect(Self.refusal(try OSCPeer.encode(deep))?.hasSuffix("bundles nested deeper than \(OSCPacket.maximumDepth)") == true)
    }
}
