import Testing
import StudioCore
@testable import StudioConfig

/// `audio: master:` and `audio: inputs:`: the mixer's settings in the config, checked against the
/// mixer's own limits, errors at file:line.
@Suite struct AudioMixerConfigTests {
    @Test func inputsAndMasterParse() throws {
        let config = try StudioConfiguration.parse(yaml: """
        audio:
          source: pipewire:all
          master: { gain: -3, ceiling: -2 }
          inputs:
            - match: alsa_input.usb-Rode
              name: host
              gain: -6
              mute: true
              pan: 0.3
              delay: 40
              fade: 100
              follow: cam1
            - name: mic2
              gain: -inf
              pan: mono
        """, source: "studio.yaml")
        #expect(config.audio.source == .pipewireAll)
        #expect(config.audio.master == (try MixerMasterSettings(gainDB: -3, ceilingDBFS: -2)))
        let host = try #require(config.audio.inputs.first)
        #expect(host.name == "host" && host.match == "alsa_input.usb-Rode")
        #expect(host.settings == (try MixerInputSettings(gainDB: -6, muted: true, pan: .position(0.3), delayMS: 40, follow: "cam1", fadeMS: 100)))
        #expect(config.audio.inputs[1].settings == (try MixerInputSettings(gainDB: -.infinity, pan: .monoToBoth)))
        #expect(config.audio.pin(forIdentity: "pipewire:alsa_input.usb-Rode_NT-USB-00.mono-fallback", displayName: "NT-USB")?.name == "host")
        #expect(config.audio.pin(forIdentity: "pipewire:other", displayName: "Other") == nil)
        #expect(config.audio.inputSettings["mic2"]?.pan == .monoToBoth)
        // The session's snapshot keeps them.
        let snapshot = config.jsonSnapshot()
        #expect(snapshot.contains(#""master":{"ceiling":-2,"gain":-3}"#) && snapshot.contains(#""follow":"cam1""#)
                && snapshot.contains(#""gain":"-inf""#) && snapshot.contains(#""pan":"mono""#), "\(snapshot)")
    }

    @Test func absentMixerSettingsAreTheDefaults() throws {
        let config = try StudioConfiguration.parse(yaml: "audio:\n  source: tone\n", source: "studio.yaml")
        #expect(config.audio.master == .standard && config.audio.inputs.isEmpty)
    }

    static let cases: [BadConfig] = [
        BadConfig(yaml: "audio:\n  inputs:\n    - name: mic1\n      gain: 30\n", line: 4, keyPath: "audio.inputs[0].gain",
                  fragment: "gain 30 dB is outside -inf..+24 dB"),
        BadConfig(yaml: "audio:\n  inputs:\n    - name: mic1\n      delay: 2000\n", line: 4, keyPath: "audio.inputs[0].delay",
                  fragment: "delay 2000 ms is outside 0..1000 ms"),
        BadConfig(yaml: "audio:\n  inputs:\n    - name: mic1\n      pan: 2\n", line: 4, keyPath: "audio.inputs[0].pan",
                  fragment: "pan 2 is outside -1..+1"),
        BadConfig(yaml: "audio:\n  inputs:\n    - name: mic1\n      pan: left\n", line: 4, keyPath: "audio.inputs[0].pan",
                  fragment: "expected a pan from -1 to +1 or mono"),
        BadConfig(yaml: "audio:\n  inputs:\n    - name: mic1\n      mute: maybe\n", line: 4, keyPath: "audio.inputs[0].mute",
                  fragment: "expected true or false"),
        BadConfig(yaml: "audio:\n  inputs:\n    - match: x\n", line: 3, keyPath: "audio.inputs[0].name", fragment: "missing: the input's name"),
        BadConfig(yaml: "audio:\n  inputs:\n    - name: mic1\n    - name: mic1\n", line: 4, keyPath: "audio.inputs[1].name",
                  fragment: "the name \"mic1\" is already given on line 3"),
        BadConfig(yaml: "audio:\n  inputs:\n    - name: master\n", line: 3, keyPath: "audio.inputs[0].name", fragment: "master is the master's name"),
        BadConfig(yaml: "audio:\n  inputs:\n    - name: mic1\n      gian: 3\n", line: 4, keyPath: "audio.inputs[0].gian", fragment: "did you mean gain?"),
        BadConfig(yaml: "audio:\n  master:\n    ceiling: 3\n", line: 3, keyPath: "audio.master.ceiling",
                  fragment: "limiter ceiling 3 dBFS is outside -20..0 dBFS"),
        BadConfig(yaml: "audio:\n  master:\n    gain: loud\n", line: 3, keyPath: "audio.master.gain", fragment: "expected a number (-inf..+24 dB)"),
    ]

    @Test(arguments: cases)
    func aBadMixerSettingPointsAtItsLine(_ bad: BadConfig) {
        do {
            let config = try StudioConfiguration.parse(yaml: bad.yaml, source: "studio.yaml")
            Issue.record("expected an error, got \(config.audio)")
        } catch {
            #expect(error.line == bad.line && error.keyPath == bad.keyPath, "\(error)")
            #expect(error.message.contains(bad.fragment), "\(error)")
        }
    }

    @Test func mixerSettingsReloadLiveButNamesNeedARestart() throws {
        let old = try StudioConfiguration.parse(yaml: "audio:\n  inputs:\n    - name: mic1\n      gain: -6\n", source: "a")
        let louder = try StudioConfiguration.parse(yaml: "audio:\n  master: { gain: -2 }\n  inputs:\n    - name: mic1\n      gain: 0\n", source: "b")
        #expect(old.changes(to: louder).live == ["audio.inputs[].settings", "audio.master"] && old.changes(to: louder).fixed.isEmpty)
        let renamed = try StudioConfiguration.parse(yaml: "audio:\n  inputs:\n    - name: host\n      gain: -6\n", source: "c")
        #expect(old.changes(to: renamed).fixed == ["audio.inputs"])
    }
}
