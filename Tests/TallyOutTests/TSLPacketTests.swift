import Testing
@testable import TallyOut

/// The TSL UMD packets against the byte layouts of TSL Products' protocol document, written out by hand.
@Suite struct TSLPacketTests {
    private let spaces = [UInt8](repeating: 0x20, count: 12)

    @Test func v31IsEighteenBytesOfAddressControlAndText() throws {
        // Program: tally 1, full brightness (bits 4-5), address 1 + 0x80.
        let program = try #require(TSLPacket.v31(TallyLamp(name: "cam1", kind: .camera, index: 1, program: true)))
        #expect(program == [0x81, 0x31] + Array("cam1".utf8) + spaces)
        // Preview: tally 2; both: tallies 1 and 2; neither: brightness only.
        #expect(TSLPacket.v31(TallyLamp(name: "cam2", kind: .camera, index: 2, preview: true))?.prefix(2) == [0x82, 0x32])
        #expect(TSLPacket.v31(TallyLamp(name: "cam3", kind: .camera, index: 3, program: true, preview: true))?.prefix(2) == [0x83, 0x33])
        #expect(TSLPacket.v31(TallyLamp(name: "cam4", kind: .camera, index: 4))?.prefix(2) == [0x84, 0x30])
        // 16 characters exactly: longer text cut, anything outside printable ASCII as '?'.
        let long = try #require(TSLPacket.v31(address: 0, tally1: false, tally2: false, text: "Kamera Nord-Ost ü lang"))
        #expect(long.count == 18 && long[0] == 0x80 && Array(long[2...]) == Array("Kamera Nord-Ost ".utf8))
        #expect(TSLPacket.v31(address: 5, tally1: false, tally2: false, text: "é")?[2] == UInt8(ascii: "?"))
        // Addresses stop at 126; a scene (no index) has no message.
        #expect(TSLPacket.v31(address: 127, tally1: true, tally2: false, text: "x") == nil)
        #expect(TSLPacket.v31(address: 126, tally1: true, tally2: false, text: "x")?[0] == 0xFE)
        #expect(TSLPacket.v31(TallyLamp(name: "pip", kind: .scene, index: nil, program: true)) == nil)
    }

    @Test func v5CarriesByteCountVersionFlagsScreenAndOneDisplay() throws {
        // cam2 on program, screen 0, index 2: lamps and text red (1), brightness 3 -> control 0x00D5.
        let display = try #require(TSLPacket.display(TallyLamp(name: "cam2", kind: .camera, index: 2, program: true)))
        #expect(TSLPacket.v5(screen: 0, display) == [
            0x0E, 0x00,  // PBC: 14 bytes follow
            0x00,  // VER
            0x00,  // FLAGS: ASCII, display data
            0x00, 0x00,  // SCREEN 0
            0x02, 0x00,  // INDEX 2
            0xD5, 0x00,  // CONTROL: RH 1 | text 1 << 2 | LH 1 << 4 | brightness 3 << 6
            0x04, 0x00,  // LENGTH
        ] + Array("cam2".utf8))
        // Preview: green (2) everywhere -> 0x00EA; both: lamps red, text amber (3) -> 0x00DD; off: 0x00C0.
        #expect(TSLPacket.display(TallyLamp(name: "a", kind: .camera, index: 1, preview: true))?.control == 0x00EA)
        #expect(TSLPacket.display(TallyLamp(name: "a", kind: .camera, index: 1, program: true, preview: true))?.control == 0x00DD)
        #expect(TSLPacket.display(TallyLamp(name: "a", kind: .camera, index: 1))?.control == 0x00C0)
        // Screen and index little-endian.
        let packet = TSLPacket.v5(screen: 0x0102, TSLPacket.Display(index: 0x0304, left: .off, right: .off, text: .off, brightness: 0, label: ""))
        #expect(packet == [0x0A, 0x00, 0x00, 0x00, 0x02, 0x01, 0x04, 0x03, 0x00, 0x00, 0x00, 0x00])
    }

    @Test func v5SendsANameThatIsNotASCIIAsUTF16LE() {
        let packet = TSLPacket.v5(screen: 1, TSLPacket.Display(index: 7, left: .red, right: .red, text: .red, label: "Büro"))
        #expect(packet[3] == 0x01, "FLAGS bit 0: UTF-16LE")
        #expect(Array(packet[10...11]) == [0x08, 0x00], "LENGTH counts bytes: 4 characters, 8 bytes")
        #expect(Array(packet[12...]) == [0x42, 0x00, 0xFC, 0x00, 0x72, 0x00, 0x6F, 0x00])
        #expect(Int(packet[0]) | Int(packet[1]) << 8 == packet.count - 2)
    }

    @Test func tcpFramingStartsWithDLESTXAndDoublesEveryDLE() {
        #expect(TSLPacket.framed([0x01, 0xFE, 0x02]) == [0xFE, 0x02, 0x01, 0xFE, 0xFE, 0x02])
        // An index of 0x00FE puts a DLE inside the packet: stuffed, while PBC keeps the unstuffed count.
        let packet = TSLPacket.v5(screen: 0, TSLPacket.Display(index: 0xFE, left: .off, right: .off, text: .off, brightness: 0, label: ""))
        let framed = TSLPacket.framed(packet)
        #expect(framed.count == packet.count + 3 && framed[0] == 0xFE && framed[1] == 0x02 && framed[2] == packet[0])
    }

    @Test func aBoardBecomesOneMessagePerCameraWithAnIndex() {
        let board = TallyBoard(lamps: [
            TallyLamp(name: "cam1", kind: .camera, index: 1, program: true),
            TallyLamp(name: "cam2", kind: .camera, index: 5, preview: true),
            TallyLamp(name: "pip", kind: .scene, index: nil, program: true),
        ])
        #expect(TSLPacket.messages(for: board, to: .v31(programTally: 1)).map { $0[0] } == [0x81, 0x85])
        // Program on tally 2 (Tally Arbiter's and Companion's reading): the bits swap.
        #expect(TSLPacket.messages(for: board, to: .v31(programTally: 2)).map { $0[1] } == [0x32, 0x31])
        #expect(TSLPacket.messages(for: board, to: .v31(programTally: 1)).map { $0[1] } == [0x31, 0x32])
        let udp = TSLPacket.messages(for: board, to: .v5(screen: 0, framed: false))
        #expect(udp.count == 2 && udp.allSatisfy { $0[0] != 0xFE })
        #expect(TSLPacket.messages(for: board, to: .v5(screen: 0, framed: true)).allSatisfy { $0.starts(with: [0xFE, 0x02]) })
    }
}
