/// TSL UMD packets, as TSL Products' published protocol lays them out (pure functions; tests hold them
/// against the byte layouts). Program is red (3.1's tally 1 unless a destination says 2), preview green
/// (3.1's other tally); a source on both has its lamps red, and TSL 5's text tally amber.
public enum TSLPacket {
    /// TSL 5.0's tally colours (two bits each).
    public enum Color: UInt16, Sendable {
        case off = 0, red = 1, green = 2, amber = 3
    }

    /// Full brightness (two bits: 0 off, 1 a seventh, 2 half, 3 full).
    public static let fullBrightness: UInt8 = 3

    // MARK: 3.1

    /// The highest 3.1 display address (the header byte is 0x80 + address, 0 to 126).
    public static let v31MaximumAddress: UInt16 = 126
    /// 3.1's display text: exactly 16 characters, printable ASCII.
    public static let v31TextLength = 16

    /// An 18-byte TSL 3.1 message: header (0x80 + address), control (bit 0 tally 1, bit 1 tally 2, bits
    /// 2-3 tallies 3 and 4, bits 4-5 brightness, bits 6-7 clear), 16 characters of text (spaces after,
    /// anything outside 0x20...0x7E as `?`). Nil for an address above 126.
    public static func v31(address: UInt16, tally1: Bool, tally2: Bool, brightness: UInt8 = fullBrightness, text: String) -> [UInt8]? {
        guard address <= v31MaximumAddress else { return nil }
        var control = UInt8(brightness & 0x03) << 4
        if tally1 { control |= 0x01 }
        if tally2 { control |= 0x02 }
        var bytes: [UInt8] = [0x80 + UInt8(address), control]
        let characters = text.unicodeScalars.prefix(v31TextLength).map { (0x20...0x7E).contains($0.value) ? UInt8($0.value) : UInt8(ascii: "?") }
        bytes += characters + Array(repeating: 0x20, count: v31TextLength - characters.count)
        return bytes
    }

    /// The 3.1 message of `lamp` (nil for a lamp without an index, or above 126): program on tally
    /// `programTally` (1 or 2), preview on the other.
    public static func v31(_ lamp: TallyLamp, programTally: Int = 1) -> [UInt8]? {
        guard let index = lamp.index else { return nil }
        let (tally1, tally2) = programTally == 2 ? (lamp.preview, lamp.program) : (lamp.program, lamp.preview)
        return v31(address: index, tally1: tally1, tally2: tally2, text: lamp.name)
    }

    // MARK: 5.0

    /// One display message (DMSG): its index, its left, right and text tallies and brightness, its text.
    public struct Display: Sendable, Equatable {
        public var index: UInt16
        public var left: Color
        public var right: Color
        public var text: Color
        public var brightness: UInt8
        public var label: String

        public init(index: UInt16, left: Color, right: Color, text: Color, brightness: UInt8 = TSLPacket.fullBrightness, label: String) {
            self.index = index
            self.left = left
            self.right = right
            self.text = text
            self.brightness = brightness
            self.label = label
        }

        /// The control word: bits 0-1 right tally, 2-3 text tally, 4-5 left tally, 6-7 brightness; bit 15
        /// clear (display data follows, not control data).
        public var control: UInt16 {
            right.rawValue | text.rawValue << 2 | left.rawValue << 4 | UInt16(brightness & 0x03) << 6
        }
    }

    /// `lamp` as a 5.0 display: lamps red on program, green on preview; text tally amber on both.
    public static func display(_ lamp: TallyLamp) -> Display? {
        guard let index = lamp.index else { return nil }
        let lamps: Color = lamp.program ? .red : lamp.preview ? .green : .off
        let text: Color = lamp.program && lamp.preview ? .amber : lamps
        return Display(index: index, left: lamps, right: lamps, text: text, label: lamp.name)
    }

    /// Whether TSL 5 sends `label` as UTF-16LE (flags bit 0) rather than ASCII: when it is not ASCII.
    public static func needsUnicode(_ label: String) -> Bool { !label.unicodeScalars.allSatisfy { $0.value < 0x80 } }

    /// A TSL 5.0 packet with one display message: PBC (the byte count after itself), VER 0, FLAGS (bit 0
    /// UTF-16LE text), SCREEN, then INDEX, CONTROL, LENGTH and the text; 16-bit values little-endian.
    public static func v5(screen: UInt16, _ display: Display) -> [UInt8] {
        let unicode = needsUnicode(display.label)
        let text: [UInt8] = unicode ? display.label.utf16.flatMap { littleEndian($0) } : Array(display.label.utf8)
        var body: [UInt8] = [0x00, unicode ? 0x01 : 0x00]
        body += littleEndian(screen)
        body += littleEndian(display.index) + littleEndian(display.control) + littleEndian(UInt16(text.count)) + text
        return littleEndian(UInt16(body.count)) + body
    }

    /// TSL 5's stream wrapper (TCP): DLE (0xFE) STX (0x02) before the packet, and every DLE in it doubled.
    public static func framed(_ packet: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [dle, stx]
        for byte in packet {
            bytes.append(byte)
            if byte == dle { bytes.append(dle) }
        }
        return bytes
    }

    public static let dle: UInt8 = 0xFE
    public static let stx: UInt8 = 0x02

    static func littleEndian(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    /// What a destination is sent for `board`: one datagram (or framed TCP message) per camera with an index.
    public static func messages(for board: TallyBoard, to destination: TSLDestinationFormat) -> [[UInt8]] {
        board.lamps.compactMap { lamp -> [UInt8]? in
            switch destination {
            case .v31(let programTally): return v31(lamp, programTally: programTally)
            case .v5(let screen, let framed):
                guard let display = display(lamp) else { return nil }
                let packet = v5(screen: screen, display)
                return framed ? Self.framed(packet) : packet
            }
        }
    }
}

/// How a destination's packets are made: 3.1, or 5.0 on a screen, framed for TCP or not.
public enum TSLDestinationFormat: Sendable, Equatable {
    /// The tally bit for program (1 or 2).
    case v31(programTally: Int)
    case v5(screen: UInt16, framed: Bool)
}
