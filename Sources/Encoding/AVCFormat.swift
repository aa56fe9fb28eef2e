/// H.264 bitstream framing. libx264 emits Annex B (start codes) both in packets and in its global
/// header; FLV and Matroska want the MP4 form: an avcC record as extradata and NAL units prefixed by
/// their 4-byte length. Converting once here lets every muxer take the packets as they are.
public enum AVCFormat {
    /// The NAL units of an Annex B byte stream, without start codes.
    public static func nalUnits(annexB data: [UInt8]) -> [ArraySlice<UInt8>] {
        var units: [ArraySlice<UInt8>] = []
        var start: Int? = nil
        var index = 0
        let count = data.count
        while index + 2 < count {
            if data[index] == 0, data[index + 1] == 0, data[index + 2] == 1 {
                if let start {
                    var end = index
                    while end > start, data[end - 1] == 0 { end -= 1 }  // trailing zero of a 4-byte start code
                    units.append(data[start..<end])
                }
                index += 3
                start = index
            } else {
                index += 1
            }
        }
        if let start, start < count { units.append(data[start..<count]) }
        return units.filter { !$0.isEmpty }
    }

    /// True when `data` begins with a start code (so it is Annex B rather than length-prefixed).
    public static func isAnnexB(_ data: [UInt8]) -> Bool {
        (data.count >= 3 && data[0] == 0 && data[1] == 0 && data[2] == 1)
            || (data.count >= 4 && data[0] == 0 && data[1] == 0 && data[2] == 0 && data[3] == 1)
    }

    /// Rewrites Annex B into 4-byte-length-prefixed NAL units (unchanged if already length-prefixed).
    public static func lengthPrefixed(annexB data: [UInt8]) -> [UInt8] {
        guard isAnnexB(data) else { return data }
        var output: [UInt8] = []
        output.reserveCapacity(data.count + 16)
        for unit in nalUnits(annexB: data) {
            let length = UInt32(unit.count)
            output += [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)]
            output += unit
        }
        return output
    }

    /// Builds an AVCDecoderConfigurationRecord (avcC, ISO/IEC 14496-15) from Annex B SPS/PPS headers.
    /// Returns `headers` unchanged when it is already avcC, nil when it has no SPS or PPS.
    public static func avcC(fromAnnexB headers: [UInt8]) -> [UInt8]? {
        if headers.first == 1 { return headers }
        let units = nalUnits(annexB: headers)
        let sps = units.filter { ($0.first ?? 0) & 0x1f == 7 }
        let pps = units.filter { ($0.first ?? 0) & 0x1f == 8 }
        guard let first = sps.first, first.count >= 4, !pps.isEmpty, sps.count < 32, pps.count < 256 else { return nil }
        let bytes = Array(first)
        var record: [UInt8] = [1, bytes[1], bytes[2], bytes[3], 0xFC | 3, 0xE0 | UInt8(sps.count)]
        for unit in sps { record += [UInt8(unit.count >> 8), UInt8(unit.count & 0xff)] + unit }
        record.append(UInt8(pps.count))
        for unit in pps { record += [UInt8(unit.count >> 8), UInt8(unit.count & 0xff)] + unit }
        return record
    }
}
