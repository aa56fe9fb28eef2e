import Foundation
import Testing
import Control
import EventStore
import StudioCore
import TestSupport
@testable import StudioServer
#if canImport(Glibc)
import Glibc
#endif

/// ISO recordings, end to end: each camera's own file beside the program recording. In the same
/// serialized suite as the other end-to-end tests (these start the real server too). Small cameras
/// (320x180) keep three software encoders light on a 2-core machine.
extension EndToEndTests {
    static let isoArguments = ["--cameras", "2", "--camera-size", "320x180"] + smallProgram

    /// Waits (generously: a loaded machine gets there later) until every ISO feed has encoded more than
    /// `frames` frames.
    static func waitForIsoFrames(_ studio: StudioHarness, moreThan frames: Int) -> Bool {
        waitUntil(seconds: 60, every: 0.1) {
            let feeds = (try? studio.json(["status"]))?["iso"]?.arrayValue ?? []
            return !feeds.isEmpty && feeds.allSatisfy { ($0["frames_encoded"]?.intValue ?? 0) > frames }
        }
    }

    /// The video stream's span (first to last frame) in milliseconds, and its first pts.
    static func videoSpan(_ file: URL) throws -> (first: Double, span: Double, frames: Int) {
        let pts = try MediaProbe.videoFrames(file).compactMap(\.ptsMilliseconds).sorted()
        return (pts.first ?? -1, (pts.last ?? 0) - (pts.first ?? 0), pts.count)
    }

    @Test func eachCameraIsRecordedOnItsOwnBesideTheProgram() throws {
        let studio = try StudioHarness()
        let directory = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--record", directory.path] + Self.isoArguments)
        _ = Self.waitForIsoFrames(studio, moreThan: 20)  // two seconds of it, unloaded
        // While running: the server lists the files being written, and status shows each ISO feed.
        let live = try studio.json(["recordings"])
        #expect(live["recordings"]?.arrayValue?.map { $0["camera"]?.stringValue ?? "" } == ["program", "cam1", "cam2"])
        #expect(live["recordings"]?.arrayValue?.allSatisfy { $0["ended_at"] == .null } == true)
        let status = try studio.json(["status"])
        let feeds = status["iso"]?.arrayValue ?? []
        #expect(feeds.compactMap { $0["camera"]?.stringValue } == ["cam1", "cam2"])
        for feed in feeds {
            #expect((feed["frames_encoded"]?.intValue ?? 0) > 20, "\(feed)")
            #expect(feed["frames_skipped"]?.intValue != nil && feed["size"] == "320x180", "\(feed)")
        }
        #expect(Self.waitForIsoFrames(studio, moreThan: 120))  // four seconds in all
        #expect(studio.stopServer() == .exited(0))

        // After the show, from the database alone.
        let listed = try JSONValue(parsing: try studio.run(["recordings", "--json", "--db", studio.database]).output)
        let recordings = listed["recordings"]?.arrayValue ?? []
        #expect(recordings.map { $0["camera"]?.stringValue ?? "" } == ["program", "cam1", "cam2"])
        #expect(recordings.map { $0["kind"]?.stringValue ?? "" } == ["program", "iso", "iso"])
        let expectedPaths = ["program", "cam1", "cam2"].map { directory.appendingPathComponent("session-1-\($0).mkv").path }
        #expect(recordings.compactMap { $0["path"]?.stringValue } == expectedPaths)
        for recording in recordings {
            #expect(recording["ended_at"]?.stringValue != nil, "\(recording)")
            let size = try FileManager.default.attributesOfItem(atPath: recording["path"]?.stringValue ?? "")[.size] as? Int
            #expect(recording["bytes"]?.intValue == size && (size ?? 0) > 10_000, "\(recording)")
        }
        let table = try studio.run(["recordings", "--db", studio.database])
        #expect(table.status == 0 && table.output.contains("session-1-cam2.mkv") && table.output.contains("program"), "\(table)")

        let program = try Self.videoSpan(directory.appendingPathComponent("session-1-program.mkv"))
        for camera in ["cam1", "cam2"] {
            let file = directory.appendingPathComponent("session-1-\(camera).mkv")
            let check = try MediaProbe.decodeCheck(file)
            #expect(check.clean && check.videoFrames > 60, "\(camera): \(check.errors)")
            let probe = try MediaProbe.probe(file)
            #expect(probe.video?.codecName == "h264" && probe.video?.width == 320 && probe.video?.height == 180, "\(camera)")
            #expect(probe.audio?.codecName == "aac", "\(camera): the ISO carries the program audio")
            // On the program's timeline: starts with the program and lasts as long (a frame or so of
            // slack each end, 10% on the count for a loaded machine).
            let iso = try Self.videoSpan(file)
            #expect(abs(iso.first - program.first) <= 100, "\(camera) starts at \(iso.first) ms, program at \(program.first) ms")
            #expect(abs(iso.span - program.span) <= 250, "\(camera) spans \(iso.span) ms, program \(program.span) ms")
            #expect(Double(iso.frames) >= (iso.span / (1000.0 / 30) + 1) * 0.9, "\(camera): \(iso.frames) frames over \(iso.span) ms")
            // It shows its own camera, every frame.
            let shown = try MediaProbe.tinyFrames(file).map { Self.camera(in: $0, among: ["cam1", "cam2"]) }
            #expect(!shown.isEmpty && shown.allSatisfy { $0 == CameraID(camera) },
                    "\(camera): frames show \(Set(shown.map { $0?.name ?? "none" }))")
        }
    }

    @Test func isoFilesSurviveAKillAndNoIsoRecordsOnlyTheProgram() throws {
        let studio = try StudioHarness()
        let directory = studio.directory.appendingPathComponent("recordings")
        try studio.serve(["--record", directory.path] + Self.isoArguments)
        #expect(Self.waitForIsoFrames(studio, moreThan: 105))  // three and a half seconds of it
        #expect(studio.stopServer(signal: SIGKILL) == .signalled(SIGKILL))
        for camera in ["cam1", "cam2"] {
            let check = try MediaProbe.decodeCheck(directory.appendingPathComponent("session-1-\(camera).mkv"))
            #expect(check.videoFrames >= 45, "\(camera): a killed server's ISO plays up to its last flush: \(check)")
        }
        // The killed session's ISO rows stay listed (never finished).
        let killed = try JSONValue(parsing: try studio.run(["recordings", "1", "--json", "--db", studio.database]).output)
        #expect(killed["recordings"]?.arrayValue?.count == 3)
        #expect(killed["recordings"]?.arrayValue?.allSatisfy { $0["ended_at"] == .null } == true)

        try studio.serve(["--record", directory.path, "--no-iso"] + Self.isoArguments)
        #expect(try studio.json(["status"])["iso"]?.arrayValue?.isEmpty == true)
        // The next start closed the crashed session, and its recordings with it.
        let recovered = try studio.json(["recordings", "1"])
        #expect(recovered["session"]?["end_reason"] == "crashed")
        #expect(recovered["recordings"]?.arrayValue?.allSatisfy { $0["ended_at"] == recovered["session"]?["ended_at"] } == true,
                "\(recovered)")
        #expect(studio.waitForProgramFrames(30))
        #expect(studio.stopServer() == .exited(0))
        let listed = try JSONValue(parsing: try studio.run(["recordings", "--json", "--db", studio.database]).output)
        #expect(listed["session"]?["id"]?.intValue == 2)
        #expect(listed["recordings"]?.arrayValue?.map { $0["camera"]?.stringValue ?? "" } == ["program"])
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("session-2-") }
        #expect(files == ["session-2-program.mkv"])
    }
}
