import Foundation
import StudioCore
import Control

/// The interchange formats: Final Cut Pro XML 1.10 and OpenTimelineIO JSON. Times are exact: FCPXML's are
/// rational seconds (frames × den / num, `3003/30000s`), OTIO's RationalTimes count frames at the program's
/// rate.
enum CutListInterchange {
    /// FCPXML 1.10: a `format` for the program, an `asset` per file (its `start` and `duration`: the program
    /// times it holds, so an asset-clip's `start` is its program time), and one project whose sequence's
    /// spine holds the clips end to end (`offset` = record time) with each transition between the two clips
    /// it joins, starting at the incoming clip's first frame. A clip that references the program recording
    /// although ISO files were asked for carries a marker saying why.
    static func fcpxml(_ list: CutList) -> String {
        let rate = list.rate
        func time(_ frames: FrameCount) -> String {
            let (numerator, denominator) = frames.seconds(at: rate)
            if numerator == 0 { return "0s" }
            return numerator % denominator == 0 ? "\(numerator / denominator)s" : "\(numerator)/\(denominator)s"
        }
        let frameDuration = time(FrameCount(1))
        var lines = [#"<?xml version="1.0" encoding="UTF-8"?>"#, "<!DOCTYPE fcpxml>", "", #"<fcpxml version="1.10">"#, "    <resources>",
                     "        <format id=\"r1\" frameDuration=\"\(frameDuration)\" width=\"\(list.width)\" height=\"\(list.height)\"/>"]
        for (index, media) in list.media.enumerated() where list.timelineClips.contains(where: { $0.media == index }) {
            let (start, end) = list.range(ofMedia: index)
            let format = media.camera == nil ? #" format="r1""# : ""
            lines.append("        <asset id=\"\(assetID(index))\" name=\"\(Markup.escaped(media.name))\" start=\"\(time(list.source(start, in: index)))\" duration=\"\(time(end - start))\""
                         + " hasVideo=\"1\" hasAudio=\"1\"\(format) videoSources=\"1\" audioSources=\"1\" audioChannels=\"2\" audioRate=\"48000\">")
            lines.append("            <media-rep kind=\"original-media\" src=\"\(Markup.escaped(media.url))\"/>")
            lines.append("        </asset>")
        }
        let lanes = nodeLanes(list)
        for lane in lanes where lane.asset >= list.media.count {
            let media = lane.media
            lines.append("        <asset id=\"\(assetID(lane.asset))\" name=\"\(Markup.escaped(media.collectedPath))\" start=\"\(time(media.sourceStart))\""
                         + " duration=\"\(time(media.duration))\" hasVideo=\"1\" hasAudio=\"1\" videoSources=\"1\" audioSources=\"1\" audioChannels=\"2\" audioRate=\"48000\">")
            lines.append("            <media-rep kind=\"original-media\" src=\"\(Markup.escaped(media.collectedPath))\"/>")
            lines.append("        </asset>")
        }
        let start = list.timelineStart + list.programStart
        lines += ["    </resources>", "    <library>", "        <event name=\"\(Markup.escaped(list.title))\">",
                  "            <project name=\"\(Markup.escaped(list.title))\">",
                  "                <sequence format=\"r1\" duration=\"\(time(list.programEnd - list.programStart))\" tcStart=\"\(time(start))\""
                  + " tcFormat=\"NDF\" audioLayout=\"stereo\" audioRate=\"48k\">",
                  "                    <spine>"]
        let indent = String(repeating: " ", count: 24)
        for (index, clip) in list.timelineClips.enumerated() {
            guard let media = clip.media else { continue }
            if let transition = clip.incoming {
                lines.append(indent + "<transition name=\"\(transitionName(transition.kind))\" offset=\"\(time(list.timelineStart + clip.from))\""
                             + " duration=\"\(time(transition.frames))\"/>")
            }
            let head = indent + "<asset-clip ref=\"\(assetID(media))\" offset=\"\(time(list.timelineStart + clip.from))\" name=\"\(Markup.escaped(clip.source))\""
                + " start=\"\(time(list.source(of: clip)))\" duration=\"\(time(clip.duration))\" tcFormat=\"NDF\""
            // The node files whose first frame falls in this clip, connected to it (before its marker, as
            // the DTD orders them): `offset` in the clip's own time (its source time at that frame).
            var inner = lanes.filter { $0.parent == index }.map { lane in
                indent + "    <asset-clip ref=\"\(assetID(lane.asset))\" lane=\"\(lane.number)\" offset=\"\(time(list.source(of: clip, at: lane.from)))\""
                    + " name=\"\(Markup.escaped(lane.media.camera))\" start=\"\(time(lane.media.sourceStart + lane.trimmed))\""
                    + " duration=\"\(time(lane.duration))\" srcEnable=\"video\" tcFormat=\"NDF\"/>"
            }
            if let note = clip.note {
                inner.append(indent + "    <marker start=\"\(time(list.source(of: clip)))\" duration=\"\(frameDuration)\" value=\"\(Markup.escaped(note))\"/>")
            }
            lines += inner.isEmpty ? [head + "/>"] : [head + ">"] + inner + [indent + "</asset-clip>"]
        }
        lines += ["                    </spine>", "                </sequence>", "            </project>", "        </event>", "    </library>",
                  "</fcpxml>"]
        return lines.joined(separator: "\n") + "\n"
    }

    static func assetID(_ index: Int) -> String { "r\(index + 2)" }

    /// A capture node's ISO file as FCPXML has it: a connected clip on the lane of its camera (from 1, in
    /// the order `nodeMedia` first names each camera), attached to the spine clip (`parent`, an index into
    /// `timelineClips`) under its first frame on the timeline (`from`, program frames; a file that began
    /// before the program starts at its first frame, `trimmed` frames in). Its asset is the V1 clips' when
    /// they take the same file, else one after theirs. Its sound is left out (`srcEnable="video"`): the
    /// program's is on the spine.
    struct NodeLane {
        var media: CutList.NodeMedia
        var number: Int
        var asset: Int
        var parent: Int
        var from: FrameCount
        var trimmed: FrameCount
        var duration: FrameCount { max(FrameCount(1), media.duration - trimmed) }
    }

    /// The node files the timeline shows: those whose first frame falls within a clip of the spine (as OTIO's
    /// node tracks place them: `CutListNodes.swift`).
    static func nodeLanes(_ list: CutList) -> [NodeLane] {
        let clips = list.timelineClips
        var cameras: [String] = [], added = 0
        return list.nodeMedia.compactMap { media in
            let trimmed = max(FrameCount(0), list.programStart - media.start), from = media.start + trimmed
            guard let parent = clips.lastIndex(where: { $0.from <= from }), from < clips[parent].to else { return nil }
            if !cameras.contains(media.camera) { cameras.append(media.camera) }
            let number = (cameras.firstIndex(of: media.camera) ?? 0) + 1
            let asset: Int
            if let shared = list.media.firstIndex(where: { $0.path == media.collectedPath && $0.camera == media.camera }) {
                asset = shared
            } else {
                asset = list.media.count + added
                added += 1
            }
            return NodeLane(media: media, number: number, asset: asset, parent: parent, from: from, trimmed: trimmed)
        }
    }

    /// The names Final Cut Pro (and DaVinci Resolve, importing it) know its built-in transitions by.
    static func transitionName(_ kind: String) -> String {
        switch kind {
        case "mix": "Cross Dissolve"
        case "dip": "Fade To Color"
        case let wipe where wipe.hasPrefix("wipe-"): "Wipe"
        case let push where push.hasPrefix("push-"): "Push"
        default: kind
        }
    }

    /// OpenTimelineIO: Timeline > Stack > one video Track; each clip an OTIO Clip whose source range is its
    /// program time in its file (an ExternalReference by `file://` URL, its available range the program
    /// times the file holds), each transition an OTIO Transition between the two clips (SMPTE_Dissolve for
    /// a mix, else Custom_Transition with the kind as its name) of `out_offset` = its length into the
    /// incoming clip. The timeline's `global_start_time` is the first frame's record timecode.
    static func otio(_ list: CutList) -> String {
        let rate = JSONValue.number(Double(list.rate.numerator) / Double(list.rate.denominator))
        func time(_ frames: FrameCount) -> JSONValue {
            .object(["OTIO_SCHEMA": "RationalTime.1", "rate": rate, "value": .number(Double(frames.frames))])
        }
        func range(_ start: FrameCount, _ duration: FrameCount) -> JSONValue {
            .object(["OTIO_SCHEMA": "TimeRange.1", "start_time": time(start), "duration": time(duration)])
        }
        func composition(_ schema: String, _ name: String, _ children: [JSONValue], _ extra: [String: JSONValue] = [:]) -> JSONValue {
            .object(["OTIO_SCHEMA": .string(schema), "metadata": .object([:]), "name": .string(name), "source_range": .null,
                     "effects": .array([]), "markers": .array([]), "enabled": .bool(true), "children": .array(children)]
                .merging(extra) { $1 })
        }
        var children: [JSONValue] = []
        for clip in list.timelineClips {
            guard let index = clip.media else { continue }
            let media = list.media[index]
            if let transition = clip.incoming {
                children.append(.object([
                    "OTIO_SCHEMA": "Transition.1", "metadata": .object(["studio": .object(["kind": .string(transition.kind)])]),
                    "name": .string(transition.kind), "in_offset": time(FrameCount(0)), "out_offset": time(transition.frames),
                    "transition_type": .string(transition.kind == "mix" ? "SMPTE_Dissolve" : "Custom_Transition"),
                ]))
            }
            let (start, end) = list.range(ofMedia: index)
            let reference = JSONValue.object([
                "OTIO_SCHEMA": "ExternalReference.1", "metadata": .object([:]), "name": .string(media.name),
                "available_range": range(list.source(start, in: index), end - start), "available_image_bounds": .null, "target_url": .string(media.url),
            ])
            let markers: [JSONValue] = clip.note.map { note in
                [.object(["OTIO_SCHEMA": "Marker.2", "metadata": .object([:]), "name": .string(note), "color": "RED",
                          "comment": .string(note), "marked_range": range(list.source(of: clip), FrameCount(0))])]
            } ?? []
            var studio: [String: JSONValue] = [
                "source": .string(clip.source), "source_kind": .string(clip.sourceKind), "reel": .string(media.reel),
                "from_ms": .int(Int(clip.fromMilliseconds)), "to_ms": .int(Int(clip.toMilliseconds)), "ended_by": clip.endedBy.map { .string($0) } ?? .null,
            ]
            if let via = clip.via { studio["via"] = .string(via) }
            if let taken = clip.capturedAt {
                // From the node's own ISO file, at the picture the program showed: taken this long before.
                studio["captured_at_us"] = .int(Int(taken))
                studio["capture_offset_frames"] = .int(Int(clip.sourceOffset.frames))
            }
            children.append(.object([
                "OTIO_SCHEMA": "Clip.2", "metadata": .object(["studio": .object(studio)]), "name": .string(clip.source),
                "source_range": range(list.source(of: clip), clip.duration), "effects": .array([]), "markers": .array(markers), "enabled": .bool(true),
                "media_references": .object(["DEFAULT_MEDIA": reference]), "active_media_reference_key": "DEFAULT_MEDIA",
            ]))
        }
        let track = composition("Track.1", "V1", children, ["kind": "Video"])
        // Each node camera's ISO file on a track of its own, whose time 0 is the V1 track's (the program's
        // first frame): a gap to the file's first frame, then the whole file, its source range in the file's
        // own timestamps, referenced where `studio collect` puts it beside this file.
        let nodeTracks: [JSONValue] = list.nodeMedia.map { media in
            var items: [JSONValue] = []
            // A file that began before the program's first frame starts there.
            let trimmed = max(FrameCount(0), list.programStart - media.start)
            let gap = media.start + trimmed - list.programStart
            if gap > FrameCount(0) {
                items.append(.object(["OTIO_SCHEMA": "Gap.1", "metadata": .object([:]), "name": "", "source_range": range(FrameCount(0), gap),
                                      "effects": .array([]), "markers": .array([]), "enabled": .bool(true)]))
            }
            let reference = JSONValue.object([
                "OTIO_SCHEMA": "ExternalReference.1", "metadata": .object([:]), "name": .string(media.name),
                "available_range": range(media.sourceStart, media.duration), "available_image_bounds": .null,
                "target_url": .string(media.collectedPath),
            ])
            let studio: [String: JSONValue] = [
                "node": .string(media.node), "camera": .string(media.camera), "node_path": .string(media.nodePath),
                "node_session": .int(Int(media.nodeSession)), "node_url": media.url.map { .string($0) } ?? .null,
                "timing": .string(media.timing), "exact": .bool(media.exact),
            ]
            items.append(.object([
                "OTIO_SCHEMA": "Clip.2", "metadata": .object(["studio": .object(studio)]), "name": .string(media.camera),
                "source_range": range(media.sourceStart + trimmed, max(FrameCount(1), media.duration - trimmed)), "effects": .array([]),
                "markers": .array([]), "enabled": .bool(true),
                "media_references": .object(["DEFAULT_MEDIA": reference]), "active_media_reference_key": "DEFAULT_MEDIA",
            ]))
            return composition("Track.1", media.camera, items, ["kind": "Video"])
        }
        let timeline = JSONValue.object([
            "OTIO_SCHEMA": "Timeline.1", "name": .string(list.title),
            "metadata": .object(["studio": .object(["session": .int(Int(list.session)), "iso": .bool(list.iso)])]),
            "global_start_time": time(list.timelineStart + list.programStart), "tracks": composition("Stack.1", "tracks", [track] + nodeTracks),
        ])
        return timeline.jsonText + "\n"
    }
}
