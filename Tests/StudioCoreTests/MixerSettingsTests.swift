import Testing
import StudioCore

@Suite struct MixerSettingsTests {
    @Test func valuesOutsideTheirRangesAreRefusedInTheOperatorsWords() {
        #expect(throws: MixerSettingError.self) { try MixerInputSettings(gainDB: 24.5) }
        #expect(throws: MixerSettingError.self) { try MixerInputSettings(delayMS: -1) }
        #expect(throws: MixerSettingError.self) { try MixerInputSettings(delayMS: 1000.5) }
        #expect(throws: MixerSettingError.self) { try MixerInputSettings(pan: .position(1.5)) }
        #expect(throws: MixerSettingError.self) { try MixerInputSettings(gainDB: .nan) }
        #expect(throws: MixerSettingError.self) { try MixerMasterSettings(ceilingDBFS: 0.5) }
        do {
            _ = try MixerInputSettings(gainDB: 30)
            Issue.record("+30 dB accepted")
        } catch {
            #expect(error.description == "gain 30 dB is outside -inf..+24 dB")
        }
        do {
            _ = try MixerInputSettings(delayMS: 1500)
            Issue.record("1500 ms accepted")
        } catch {
            #expect(error.description == "delay 1500 ms is outside 0..1000 ms")
        }
    }

    @Test func theEdgesAndMinusInfinityAreAccepted() throws {
        let off = try MixerInputSettings(gainDB: -.infinity, pan: .position(-1), delayMS: 1000, follow: "  cam1 ")
        #expect(linearGain(decibels: off.gainDB) == 0)
        #expect(off.follow == "cam1")
        #expect(try MixerInputSettings(follow: " ").follow == nil)
        #expect(try MixerInputSettings(gainDB: 24).gainDB == 24)
        #expect(MixerLimit.pan.rangeText == "-1..+1")
        #expect(MixerSettingError(limit: .pan, value: 1.5).description == "pan 1.5 is outside -1..+1")
        #expect(MixerLimit.ceiling.rangeText == "-20..0 dBFS")
        #expect(try MixerMasterSettings().ceilingDBFS == -1)
    }
}
