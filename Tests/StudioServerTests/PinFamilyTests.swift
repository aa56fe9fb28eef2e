import Foundation
import Testing
@testable import StudioServer
import StudioCore
import Control
import TestSupport

/// A pin whose `match` fits several devices names them all (`NAME`, `NAME-2`...), never drops one, and
/// each device keeps its name across restarts.
@Suite struct PinFamilyTests {
    @Test func theFirstDeviceGetsThePinsNameTheOthersNumberedOnes() {
        let family = PinFamily(name: "wide")
        #expect(family.name(for: "a", known: []) == "wide")
        #expect(family.name(for: "b", known: [("a", "wide")]) == "wide-2")
        #expect(family.name(for: "c", known: [("a", "wide"), ("b", "wide-2")]) == "wide-3")
        // A device keeps the family name it holds, whoever else is known.
        #expect(family.name(for: "b", known: [("b", "wide-2"), ("a", "wide")]) == "wide-2")
        #expect(family.name(for: "a", known: [("b", "wide-2"), ("a", "wide")]) == "wide")
        // A free name is reused before a new number.
        #expect(family.name(for: "c", known: [("b", "wide-2")]) == "wide")
        #expect(family.name(for: "d", known: [("a", "wide"), ("c", "wide-3")]) == "wide-2")
        // A device holding a name outside the family gets one of the family.
        #expect(family.name(for: "a", known: [("a", "cam4"), ("b", "wide")]) == "wide-2")
    }

    @Test func familyNamesAreTheNameAndItsNumberedOnes() {
        let family = PinFamily(name: "wide")
        #expect(family.contains("wide") && family.contains("wide-2") && family.contains("wide-12"))
        #expect(!family.contains("wide-1") && !family.contains("wide-x") && !family.contains("wider") && !family.contains("cam1"))
    }

    /// The demo's three test-pattern cameras all fit `match: test-pattern`: before, the show started
    /// with one camera of three and no warning.
    @Test func aPinThatFitsSeveralCamerasNamesThemAllAndWarns() throws {
        let studio = try StudioHarness()
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try """
        cameras:
          pins:
            - match: test-pattern
              name: studio
        """.write(to: config, atomically: true, encoding: .utf8)
        let server = try studio.serve(["--config", config.path, "--cameras", "3", "--program", "640x360@30"])
        let names = try studio.json(["cameras"])["cameras"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(names.sorted() == ["studio", "studio-2", "studio-3"], "\(names)")
        let identities = try studio.json(["cameras"])["cameras"]?.arrayValue?.compactMap { camera -> String? in
            guard let name = camera["name"]?.stringValue, let identity = camera["identity"]?.stringValue else { return nil }
            return "\(name)=\(identity)"
        } ?? []
        #expect(Set(identities.map { $0.split(separator: "=")[1] }).count == 3, "one identity per camera: \(identities)")
        #expect(try studio.run(["switch", "studio-3", "--socket", studio.socket]).status == 0)
        #expect(studio.stopServer() == .exited(0))
        let warnings = server.errorText().split(separator: "\n").filter { $0.contains("fits several devices") }
        #expect(warnings.count == 2, "one warning per numbered camera: \(warnings)")

        // The next start gives each device the name it had.
        try studio.serve(["--config", config.path, "--cameras", "3", "--program", "640x360@30"])
        let again = try studio.json(["cameras"])["cameras"]?.arrayValue?.compactMap { camera -> String? in
            guard let name = camera["name"]?.stringValue, let identity = camera["identity"]?.stringValue else { return nil }
            return "\(name)=\(identity)"
        } ?? []
        #expect(Set(again) == Set(identities), "\(again) vs \(identities)")
        #expect(studio.stopServer() == .exited(0))
    }
}
