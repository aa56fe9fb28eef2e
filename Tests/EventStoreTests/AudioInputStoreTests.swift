import Foundation
import Testing
@testable import EventStore

/// Migration 0005: stable audio input names (identity -> micN, as cameras' camN) and each session's
/// program loudness in its row.
@Suite struct AudioInputStoreTests {
    @Test func audioInputNamesAreStableAcrossReopenAndPinning() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("studio.db")
        do {
            let store = try EventStore(path: path)
            #expect(try store.audioInputName(forIdentity: "pipewire:alsa_input.usb-A", displayName: "A", pinnedName: nil) == "mic1")
            #expect(try store.audioInputName(forIdentity: "pipewire:vmicB", displayName: "B", pinnedName: nil) == "mic2")
            #expect(try store.audioInputName(forIdentity: "pipewire:alsa_input.usb-A", displayName: "A again", pinnedName: nil) == "mic1")
            store.close()
        }
        let store = try EventStore(path: path)
        // Reopened: the same identities keep their names; a new one gets the lowest free micN.
        #expect(try store.audioInputName(forIdentity: "pipewire:vmicB", displayName: "B", pinnedName: nil) == "mic2")
        #expect(try store.audioInputName(forIdentity: "pipewire:vmicC", displayName: "C", pinnedName: nil) == "mic3")
        // C pinned to mic1, which A had: C takes it, A moves to the lowest free name (mic3, which C gave up).
        #expect(try store.audioInputName(forIdentity: "pipewire:vmicC", displayName: "C", pinnedName: "mic1") == "mic1")
        #expect(try store.audioInputName(forIdentity: "pipewire:alsa_input.usb-A", displayName: "A", pinnedName: nil) == "mic3")
        #expect(try store.audioInputName(forIdentity: "pipewire:host", displayName: "Host", pinnedName: "host") == "host")
        let inputs = try store.audioInputs()
        #expect(inputs.map(\.name) == ["host", "mic1", "mic2", "mic3"])
        #expect(inputs.map(\.identity) == ["pipewire:host", "pipewire:vmicC", "pipewire:vmicB", "pipewire:alsa_input.usb-A"])
        #expect(throws: EventStoreError.self) { try store.audioInputName(forIdentity: "", displayName: "", pinnedName: nil) }
    }

    @Test func aSessionKeepsItsLoudnessInItsRow() throws {
        let directory = try TemporaryDirectory()
        let store = try EventStore(path: directory.file("studio.db"))
        let first = try store.startSession(configSnapshot: "{}")
        #expect(try store.session(id: first)?.integratedLUFS == nil)
        try store.recordLoudness(integratedLUFS: -23.4, peakDBFS: -3.2)
        try store.endSession(reason: "stopped")
        let second = try store.startSession(configSnapshot: "{}")
        try store.recordLoudness(integratedLUFS: nil, peakDBFS: nil)
        try store.endSession(reason: "stopped")
        let rows = try store.sessions()
        #expect(rows.first { $0.id == first }.map { ($0.integratedLUFS, $0.peakDBFS) } ?? (nil, nil) == (-23.4, -3.2))
        #expect(rows.first { $0.id == second }?.integratedLUFS == nil && rows.first { $0.id == second }?.peakDBFS == nil)
        // Written with the migration's real columns, readable with sqlite3 directly.
        #expect(try store.appliedMigrations().contains { $0.name == "0005_audio_inputs" })
    }
}
