import Foundation
import Testing
import Control
import StudioCore
@testable import StudioViews
import TestSupport
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Capture nodes' ISO files in an `--iso` FCPXML (docs/export.md, "Final Cut Pro XML"): each node camera on a
/// lane of its own, each file a connected clip (picture only) attached to the spine clip under its first
/// frame, its `offset` in that clip's time. Read back by OpenTimelineIO's own FCPXML reader (the
/// `otio-fcpx-xml-adapter` plugin, not our code), each lane's clips land on the timeline frames, and read the
/// file frames, that the OTIO export's node tracks give them.
@Suite struct FCPXMLNodeLanesTests {
    /// A 60 s show at 30 fps starting 10 s into the timeline's timecode: cam1's ISO (its timecode 1000 frames
    /// after its program time) for 10 s, then the program recording. Node files: pc2/cam1 twice (a restart),
    /// pc3/cam3 from before the program's first frame, pc3/cam4 after its last (not on the timeline).
    static func list() -> CutList {
        let rate = Rational(30)
        let iso = CutList.Media(path: "/r/session-5-cam1.mkv", url: "file:///r/session-5-cam1.mkv", camera: "cam1", reel: "CAM1",
                                start: FrameCount(0), end: FrameCount(1799), timecodeShift: FrameCount(1000))
        let program = CutList.Media(path: "/r/session-5-program.mkv", url: "file:///r/session-5-program.mkv", camera: nil, reel: "PROGRAM",
                                    start: FrameCount(0), end: FrameCount(1799))
        let clips = [(0, 300, 0, "cam1"), (300, 1800, 1, "cam2")].enumerated().map { index, clip in
            CutList.Clip(sequence: index + 1, source: clip.3, sourceKind: "camera", media: clip.2, from: FrameCount(Int64(clip.0)),
                         to: FrameCount(Int64(clip.1)), intervalFrom: FrameCount(Int64(clip.0)), fromMilliseconds: Int64(clip.0) * 100 / 3,
                         toMilliseconds: Int64(clip.1) * 100 / 3, endedBy: index == 0 ? "switch" : "session end", via: nil, incoming: nil,
                         note: index == 1 ? "cam2 has no ISO recording: from the program recording" : nil)
        }
        var list = CutList(session: 5, title: "studio session 5", rate: rate, width: 1280, height: 720, timelineStart: FrameCount(300),
                           programStart: FrameCount(0), programEnd: FrameCount(1800), media: [iso, program], clips: clips, iso: true)
        func node(_ node: String, _ camera: String, session: Int64, start: Int64, duration: Int64, timecode: Int64) -> CutList.NodeMedia {
            CutList.NodeMedia(node: node, camera: node + "/" + camera, name: "session-\(session)-\(camera).mkv",
                              nodePath: "/srv/\(node)/session-\(session)-\(camera).mkv", nodeSession: session, url: nil,
                              start: FrameCount(start), sourceStart: FrameCount(timecode), duration: FrameCount(duration), exact: true)
        }
        list.nodeMedia = [node("pc2", "cam1", session: 4, start: 120, duration: 100, timecode: 54_000),
                          node("pc3", "cam3", session: 9, start: -50, duration: 2000, timecode: 70_000),
                          node("pc2", "cam1", session: 5, start: 400, duration: 600, timecode: 60_000),
                          node("pc3", "cam4", session: 9, start: 2000, duration: 300, timecode: 80_000)]
        return list
    }

    /// The connected clips as written: lane, parent, offset in the parent's time, file start and length.
    @Test func eachNodeCameraIsALaneOfConnectedClipsUnderTheSpineClipAtItsFirstFrame() throws {
        #if canImport(FoundationXML)
        let document = try XMLDocument(data: Data(ExportFormat.fcpxml.render(Self.list()).utf8), options: [])
        let root = try #require(document.rootElement())
        var assets: [String: (name: String, src: String, start: String)] = [:]
        for case let asset as XMLElement in try root.nodes(forXPath: "resources/asset") {
            let src = (try asset.nodes(forXPath: "media-rep").first as? XMLElement)?.attribute(forName: "src")?.stringValue ?? ""
            assets[asset.attribute(forName: "id")?.stringValue ?? ""] = (asset.attribute(forName: "name")?.stringValue ?? "", src,
                                                                         asset.attribute(forName: "start")?.stringValue ?? "")
        }
        let spine = try #require(try root.nodes(forXPath: "library/event/project/sequence/spine").first as? XMLElement)
        var connected: [String] = []
        for (index, parent) in (spine.children ?? []).compactMap({ $0 as? XMLElement }).enumerated() {
            for case let child as XMLElement in parent.children ?? [] where child.name == "asset-clip" {
                func value(_ name: String) -> String { child.attribute(forName: name)?.stringValue ?? "" }
                let asset = assets[value("ref")]
                connected.append("\(index) lane \(value("lane")) \(value("name")) offset \(value("offset")) start \(value("start")) "
                                 + "duration \(value("duration")) \(value("srcEnable")) \(asset?.src ?? "no asset") from \(asset?.start ?? "")")
            }
            // The DTD's order: connected clips before a clip's markers.
            let names = (parent.children ?? []).compactMap(\.name)
            if let clip = names.lastIndex(of: "asset-clip"), let marker = names.firstIndex(of: "marker") {
                #expect(clip < marker, "\(names)")
            }
        }
        // pc2/cam1 at frame 120, in cam1's ISO clip (its time: its timecode, 1000 + 120); pc3/cam3 trimmed to
        // the program's first frame (50 frames in); pc2's second file at 400, in the program recording's clip.
        #expect(connected == [
            "0 lane 1 pc2/cam1 offset 1120/30s start 1800s duration 100/30s video pc2/session-4-cam1.mkv from 1800s",
            "0 lane 2 pc3/cam3 offset 1000/30s start 2335s duration 65s video pc3/session-9-cam3.mkv from 70000/30s",
            "1 lane 1 pc2/cam1 offset 400/30s start 2000s duration 20s video pc2/session-5-cam1.mkv from 2000s",
        ], "\(connected)")
        #else
        throw HarnessError("FoundationXML is not available")
        #endif
    }

    /// OpenTimelineIO's FCPXML reader against the OTIO export: each node file's clip on the same timeline
    /// frame (the FCPXML's from its timecode 0, the OTIO's from the program's first frame: `timelineStart`
    /// apart), from the same file frame, as long.
    @Test(.enabled(if: OTIO.fcpxmlReader != nil, "needs otio-fcpx-xml-adapter from PyPI in \(OTIO.venv) (scripts/setup.sh installs it); it could not be installed"))
    func opentimelineiosFCPXMLReaderPutsTheLanesWhereTheOTIOExportPutsTheTracks() throws {
        let scratch = try ScratchStudio("fcpxml-lanes")
        defer { scratch.remove() }
        let list = Self.list()
        let fcpxml = scratch.directory.appendingPathComponent("lanes.fcpxml").path
        let otio = scratch.directory.appendingPathComponent("lanes.otio").path
        try ExportFormat.fcpxml.render(list).write(toFile: fcpxml, atomically: true, encoding: .utf8)
        try ExportFormat.otio.render(list).write(toFile: otio, atomically: true, encoding: .utf8)
        let script = """
        import json, sys
        import opentimelineio as otio
        def first_timeline(read):
            # The FCPXML reader gives a library as collections (events) of timelines (projects).
            if isinstance(read, otio.schema.Timeline):
                return read
            return next(t for t in map(first_timeline, read) if t is not None) if isinstance(read, otio.schema.SerializableCollection) else None
        def clips(path, adapter, skip):
            timeline = first_timeline(otio.adapters.read_from_file(path, adapter_name=adapter))
            found = []
            for track in timeline.tracks:
                if track.name in skip:
                    continue
                for clip in track:
                    if isinstance(clip, otio.schema.Clip):
                        found.append([clip.name, clip.range_in_parent().start_time.to_frames(),
                                      clip.source_range.start_time.to_frames(), clip.source_range.duration.to_frames()])
            return sorted(found)
        print(json.dumps({"fcpxml": clips(sys.argv[1], "fcpx_xml", ["0"]), "otio": clips(sys.argv[2], "otio_json", ["V1"])}))
        """
        let child = try ChildProcess(executable: try #require(OTIO.fcpxmlReader), arguments: ["-c", script, fcpxml, otio])
        try #require(child.wait(timeout: 60) == .exited(0), "opentimelineio: \(child.errorText())")
        let read = try JSONValue(parsing: child.outputText())
        func rows(_ key: String) -> [[Double]] {
            (read[key]?.arrayValue ?? []).map { row in (row.arrayValue ?? []).dropFirst().compactMap(\.doubleValue) }
        }
        let names = (read["fcpxml"]?.arrayValue ?? []).compactMap { $0[0]?.stringValue }
        #expect(names == ["pc2/cam1", "pc2/cam1", "pc3/cam3"], "\(read)")
        let timelineStart = Double(list.timelineStart.frames)
        let fromFCPXML = rows("fcpxml").map { [$0[0] - timelineStart] + $0.dropFirst() }
        // pc3/cam4, after the program's last frame, is on the OTIO's track only.
        let fromOTIO = rows("otio").filter { $0[0] < Double(list.programEnd.frames) }
        #expect(fromFCPXML == fromOTIO, "FCPXML \(fromFCPXML), OTIO \(fromOTIO)")
        #expect(fromFCPXML.map { $0[0] } == [120, 400, 0], "\(fromFCPXML)")
    }
}
