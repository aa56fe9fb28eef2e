import Testing
import StudioCore
@testable import StudioConfig

/// `backup:`/`back:` on pins and scenes, and the keys a reload compares.
@Suite struct BackupAndReloadKeyTests {
    private func parse(_ yaml: String) throws(ConfigError) -> StudioConfiguration { try StudioConfiguration.parse(yaml: yaml, source: "studio.yaml") }

    private func error(_ yaml: String) -> ConfigError? {
        do { _ = try parse(yaml) } catch { return error }
        return nil
    }

    @Test func pinsAndScenesNameTheirBackups() throws {
        let config = try parse("""
        cameras:
          pins:
            - { match: usb-a, name: cam1, backup: cam2, back: auto }
            - { match: usb-b, name: cam2, backup: wide }
            - { match: usb-c, name: cam3 }
        scenes:
          - { name: wide, layout: side-by-side, sources: [cam3, cam4], backup: cam4 }
        """)
        #expect(config.backups == ["cam1": BackupRule(backup: "cam2", back: .auto), "cam2": BackupRule(backup: "wide", back: .manual),
                                   "wide": BackupRule(backup: "cam4", back: .manual)])
        // The session's snapshot records them.
        let snapshot = config.jsonSnapshot()
        #expect(snapshot.contains(#""back":"auto","backup":"cam2""#) && snapshot.contains(#""backup":"cam4""#), "\(snapshot)")
    }

    @Test func aCycleOfBackupsIsRefusedAtItsFirstEntryNamingIt() throws {
        let yaml = """
        cameras:
          pins:
            - match: usb-a
              name: cam1
              backup: cam2
            - match: usb-b
              name: cam2
              backup: wide
        scenes:
          - name: wide
            layout: full
            sources: [cam3]
            backup: cam1
        """
        let refused = try #require(error(yaml))
        #expect(refused.line == 5 && refused.keyPath == "cameras.pins[0].backup", "\(refused)")
        #expect(refused.message.contains("backup cycle: cam1 -> cam2 -> wide -> cam1"), "\(refused)")
        #expect(refused.description.hasPrefix("studio.yaml:5: "))

        let selfBackup = try #require(error("scenes:\n  - { name: one, layout: full, sources: [cam1], backup: one }\n"))
        #expect(selfBackup.line == 2 && selfBackup.message.contains("backup cycle: one -> one"), "\(selfBackup)")
        // A chain that ends is fine.
        #expect(error("cameras:\n  pins:\n    - { match: a, name: cam1, backup: cam2 }\n    - { match: b, name: cam2, backup: cam3 }\n") == nil)
    }

    @Test func backWithoutABackupAndABadModeAreRefused() throws {
        let lonely = try #require(error("cameras:\n  pins:\n    - match: a\n      name: cam1\n      back: auto\n"))
        #expect(lonely.line == 5 && lonely.keyPath == "cameras.pins[0].back" && lonely.message.contains("back needs a backup"), "\(lonely)")
        let mode = try #require(error("cameras:\n  pins:\n    - { match: a, name: cam1, backup: cam2, back: sometimes }\n"))
        #expect(mode.message.contains("auto, manual") && mode.keyPath == "cameras.pins[0].back", "\(mode)")
    }

    @Test func everyTopLevelKeyIsComparedByAReload() {
        let compared = Set(StudioConfiguration.reloadKeys.map { String($0.name.split(separator: ".").first ?? "") })
        #expect(compared == Set(StudioConfiguration.CodingKeys.allCases.map(\.stringValue)))
        let cameraKeys = Set(StudioConfiguration.reloadKeys.compactMap { key -> String? in
            let parts = key.name.split(separator: ".")
            return parts.first == "cameras" && parts.count > 1 ? String(parts[1].split(separator: "[").first ?? "") : nil
        })
        #expect(cameraKeys == Set(CameraSettings.CodingKeys.allCases.map(\.stringValue)))
    }

    @Test func changesSortLiveKeysFromTheOnesARestartApplies() throws {
        let old = try parse("""
        cameras:
          pins: [{ match: a, name: cam1, backup: cam2 }]
        scenes: [{ name: pip, layout: pip, sources: [cam1, cam2] }]
        """)
        var new = old
        #expect(old.changes(to: new) == ([], []))
        new.scenes[0].corner = .topLeft
        new.cameras.pins[0].backup = BackupRule(backup: "cam3", back: .auto)
        new.transition.frames = 30
        #expect(old.changes(to: new).live == ["cameras.pins[].backup", "scenes", "transition"])
        #expect(old.changes(to: new).fixed.isEmpty)
        new.program = ProgramFormat(width: 1920, height: 1080, frameRate: Rational(30))
        new.cameras.pins[0].match = "b"
        new.recordDirectory = "/tmp/rec"
        #expect(old.changes(to: new).fixed == ["program.format", "record", "cameras.pins"])
    }
}
