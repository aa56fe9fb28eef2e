import Foundation
import Testing
import Capture
import Control
import StudioConfig
import StudioCore
import StudioServer
import StudioSystem
import TestSupport

/// A real server with a player (`players:`) of a clip made with ffmpeg (its frame numbers burnt in, a
/// 1 kHz tone): listed as a camera, played with `play`, cut to program, the clip's pictures on the
/// program in order, its events in the history, its sound an input named like it. Real time: the
/// server's clock.
@Suite struct PlayerEndToEndTests {
    static func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studio-players-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func options(_ directory: URL, players: [PlayerSpec]) -> ServerOptions {
        var options = ServerOptions(configuration: StudioConfiguration(), databasePath: directory.appendingPathComponent("studio.db").path,
                                    socketPath: directory.appendingPathComponent("studio.sock").path)
        options.testCameraCount = 1
        options.testCameraSize = (640, 360)
        options.configuration.http.enabled = false
        options.configuration.players = players
        return options
    }

    @Test func aPlayerIsACameraThatPlaysItsClipOnProgramWithItsSound() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clip = directory.appendingPathComponent("intro.mp4").path
        try NumberedClips.make(clip, frames: 120, tint: 200, audio: true)
        let options = Self.options(directory, players: [PlayerSpec(name: "intro", items: [clip])])
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)

        // A camera like any other: named by its entry, cued on its first frame.
        let cameras = try client.request("cameras")["cameras"]?.arrayValue ?? []
        let intro = try #require(cameras.first { $0["name"] == "intro" }, "\(cameras)")
        #expect(intro["backend"] == "player" && intro["identity"] == "player:intro", "\(intro)")
        #expect(intro["player"]?["state"] == "cued" && intro["player"]?["item"] == "intro.mp4", "\(intro)")

        // Unknown players and items: the error lists what exists.
        #expect(throws: ControlError.self) { try client.request("play", arguments: ["player": "outro"]) }
        do {
            _ = try client.request("cue", arguments: ["player": "intro", "item": "nosuch.mov"])
            Issue.record("cue of an unknown item answered")
        } catch {
            #expect(error.message.contains("1 intro.mp4"), "\(error.message)")
        }

        let tiles = server.tiles
        #expect(tiles.subscribe("program"))
        _ = try client.request("switch", arguments: ["source": "intro"])
        let played = try client.request("play", arguments: ["player": "intro"])
        #expect(played["status"]?["state"] == "playing", "\(played)")

        // The program shows the clip's pictures, in order.
        var numbers: [Int] = []
        var sequence: UInt64 = 0
        let seen = waitUntil(seconds: 20, every: 0.001) {
            guard let picture = tiles.waitForNewer("program", than: sequence, timeoutSeconds: 1) else { return false }
            sequence = picture.sequence
            guard let frame = try? picture.jpeg.withUnsafeBytes({ try MJPEGDecoder().decode($0) }),
                  let shown = NumberedClips.read(frame), abs(shown.tint - 200) < 12 else { return false }
            if numbers.last != shown.number { numbers.append(shown.number) }
            return numbers.count >= 5
        }
        #expect(seen, "the clip's pictures on program: \(numbers)")
        #expect(numbers == numbers.sorted(), "in order: \(numbers)")

        // Its sound: an input named like the player, at the tone's level (ffmpeg's sine: 1/8, -18 dBFS peak).
        var input: JSONValue?
        let heard = waitUntil(seconds: 20, every: 0.05) {
            input = (try? client.request("audio"))?["inputs"]?.arrayValue?.first { $0["name"] == "intro" }
            let peaks = input?["levels"]?["peak_dbfs"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            return peaks.count == 2 && peaks.allSatisfy { abs($0 + 18) < 2 }
        }
        #expect(heard, "the player's sound is a mixer input named intro, heard: \(input ?? .null)")

        // Its start and its end in the history; then it holds its last frame, ended.
        var events: [JSONValue] = []
        let ended = waitUntil(seconds: 20, every: 0.05) {
            events = (try? client.request("log", arguments: ["kind": "clip_started,clip_ended"]))?["events"]?.arrayValue ?? []
            return events.count == 2
        }
        #expect(ended, "\(events)")
        #expect(events.map { $0["kind"]?.stringValue ?? "" } == ["clip_started", "clip_ended"], "\(events)")
        #expect(events.first?["camera"] == "intro" && events.first?["details"]?["item"] == "intro.mp4", "\(events)")
        // Its length as its container says (its sound's last packet may reach a little past its last picture).
        let length = events.first?["details"]?["duration_ms"]?.stringValue.flatMap { Int($0) } ?? 0
        #expect((3990...4100).contains(length) && events.last?["details"]?["how"] == "end", "\(events)")
        let after = try client.request("cameras")["cameras"]?.arrayValue?.first { $0["name"] == "intro" }
        #expect(after?["player"]?["state"] == "ended" && after?["state"] == "live", "\(after ?? .null)")
        #expect(after?["player"]?["remaining_ms"] == 0, "\(after ?? .null)")

        // The CLI: `studio stop` cues it again; an unknown item is refused, the items listed.
        let studio = try StudioHarness()
        let stopped = try studio.run(["stop", "intro", "--socket", options.socketPath])
        #expect(stopped.status == 0 && stopped.output.hasPrefix("intro: cued intro.mp4 (1/1) at 0.000 s"), "\(stopped)")
        let refused = try studio.run(["play", "intro", "outro.mov", "--socket", options.socketPath])
        #expect(refused.status != 0 && refused.error.contains("intro has no item outro.mov (items: 1 intro.mp4)"), "\(refused)")
    }

    @Test func theTransportIsOnTheHTTPAPI() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("a.mp4").path, second = directory.appendingPathComponent("b.mp4").path
        try NumberedClips.make(first, frames: 30)
        try NumberedClips.make(second, frames: 300)
        var options = Self.options(directory, players: [PlayerSpec(name: "deck", items: [first, second])])
        let port = try NginxRTMP.freePort()
        options.configuration.http.enabled = true
        options.configuration.http.listen = ListenAddress(host: "127.0.0.1", port: UInt16(port))
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        func post(_ path: String, _ body: String? = nil) throws -> HTTPTestClient.Response {
            try HTTPTestClient.fetch(port: port, "POST", path, headers: ["Content-Type": "application/json"], body: body.map { Array($0.utf8) })
        }
        let cued = try post("/api/v1/player/deck/cue", #"{"item": "2"}"#)
        let cuedReply = try JSONValue(parsing: cued.text)
        #expect(cued.status == 200 && cuedReply["status"]?["item"] == "b.mp4" && cuedReply["status"]?["state"] == "cued", "\(cued)")
        let played = try post("/api/v1/player/deck/play")
        let playedState = try JSONValue(parsing: played.text)["status"]?["state"]
        #expect(played.status == 200 && playedState == "playing", "\(played)")
        let paused = try post("/api/v1/player/deck/pause")
        let pausedState = try JSONValue(parsing: paused.text)["status"]?["state"]
        #expect(paused.status == 200 && pausedState == "paused", "\(paused)")
        // Seek into the item on screen (paused: cued there), and cue an item at a time into it.
        let sought = try JSONValue(parsing: try post("/api/v1/player/deck/seek", #"{"at": "5"}"#).text)["status"]
        #expect(sought?["state"] == "cued" && abs((sought?["position_ms"]?.intValue ?? 0) - 5000) <= 40, "\(sought ?? .null)")
        #expect(abs((sought?["remaining_ms"]?.intValue ?? 0) - 5000) <= 40, "\(sought ?? .null)")
        let cuedAt = try JSONValue(parsing: try post("/api/v1/player/deck/cue", #"{"item": "b.mp4", "at": "0:07.5"}"#).text)["status"]
        #expect(abs((cuedAt?["position_ms"]?.intValue ?? 0) - 7500) <= 40, "\(cuedAt ?? .null)")
        let badTime = try post("/api/v1/player/deck/seek", #"{"at": "soon"}"#)
        #expect(badTime.status == 400 && badTime.text.contains("1:30"), "\(badTime)")
        // The CLI's seek, and the player in the metrics.
        let studio = try StudioHarness()
        let seek = try studio.run(["seek", "deck", "2", "--socket", options.socketPath])
        #expect(seek.status == 0 && seek.output.hasPrefix("deck: cued b.mp4 (2/2) at 2.0"), "\(seek)")
        let status = try JSONValue(parsing: try HTTPTestClient.fetch(port: port, "GET", "/api/v1/status").text)
        #expect(abs((status["players"]?["deck"]?["remaining_ms"]?.intValue ?? 0) - 8000) <= 40, "\(status["players"] ?? .null)")
        // The console: a row per player and a countdown on its tile.
        let page = try HTTPTestClient.fetch(port: port, "GET", "/").text, script = try HTTPTestClient.fetch(port: port, "GET", "/players.js")
        #expect(page.contains(#"<script src="players.js""#) && page.contains(#"id="players""#), "\(page)")
        #expect(script.status == 200 && script.text.contains("countdown") && script.text.contains("remaining_ms"), "\(script.status)")
        let metrics = try HTTPTestClient.fetch(port: port, "GET", "/metrics").text
        #expect(metrics.contains(#"studio_player_state{camera="deck",state="cued"} 1"#), "\(metrics)")
        let remaining = metrics.split(separator: "\n").first { $0.hasPrefix(#"studio_player_remaining_seconds{camera="deck"}"#) }
        #expect(remaining.flatMap { Double($0.split(separator: " ").last ?? "") }.map { abs($0 - 8) < 0.05 } == true, "\(remaining ?? "none")")
        let unknown = try post("/api/v1/player/nosuch/play")
        #expect(unknown.status >= 400 && unknown.text.contains("players: deck"), "\(unknown)")
    }

    @Test func aReloadChecksThePlayersFilesAgainAndRefusesABrokenOneNamingIt() throws {
        let studio = try StudioHarness()
        let clip = studio.directory.appendingPathComponent("intro.mp4")
        try NumberedClips.make(clip.path, frames: 30)
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try "players:\n  - {name: intro, items: [intro.mp4]}\n".write(to: config, atomically: true, encoding: .utf8)
        try studio.serve(["--config", config.path, "--cameras", "1"] + EndToEndTests.smallProgram)
        let fine = try studio.run(["reload", "--socket", studio.socket])
        #expect(fine.status == 0, "\(fine)")
        // The file replaced by one of no frames since the start: the reload is refused, naming it; the show goes on.
        try FileManager.default.removeItem(at: clip)
        let made = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-f", "lavfi", "-i", "color=c=black:s=320x180:r=30", "-frames:v", "0", "-c:v", "libx264", "-f", "mp4", "-y", clip.path,
        ])
        try #require(made.wait(timeout: 60) == .exited(0), "\(made.errorText())")
        let refused = try studio.run(["reload", "--socket", studio.socket])
        #expect(refused.status == 1 && refused.error.contains(clip.path) && refused.error.contains("no video stream")
                && refused.error.contains("nothing was changed"), "\(refused)")
        // Replaced by one of a codec this libavcodec cannot decode: refused, naming the file and the codec.
        try NumberedClips.makeUndecodable(clip.path)
        let undecodable = try studio.run(["reload", "--socket", studio.socket])
        #expect(undecodable.status == 1 && undecodable.error.contains(clip.path) && undecodable.error.contains("no avs2 decoder"), "\(undecodable)")
        let cameras = try studio.json(["cameras"])["cameras"]?.arrayValue ?? []
        #expect(cameras.first { $0["name"] == "intro" }?["state"] == "live", "\(cameras)")
        #expect(studio.stopServer() == .exited(0))
    }

    @Test func aMissingFileRefusesTheStartNamingIt() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("media/missing-intro.mov").path
        let options = Self.options(directory, players: [PlayerSpec(name: "intro", items: [missing])])
        do {
            let server = try StudioServer(options: options)
            server.shutdown()
            Issue.record("a server started with a player of a missing file")
        } catch {
            #expect("\(error)".contains(missing), "\(error)")
        }
    }
}

/// The program as recorded, frame by frame, while a player plays a numbered clip on it: every picture of
/// the clip exactly once, in order. Timing-sensitive (real time: a program tick missed under load skips
/// a picture).
@Suite struct PlayerProgramFrameTests {
    @Test func theRecordedProgramShowsEveryPictureOfTheClipOnceInOrder() throws {
        let directory = try PlayerEndToEndTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clip = directory.appendingPathComponent("count.mp4").path
        try NumberedClips.make(clip, frames: 90, tint: 200)
        let recordings = directory.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        var options = PlayerEndToEndTests.options(directory, players: [PlayerSpec(name: "count", items: [clip])])
        options.configuration.recordDirectory = recordings.path
        options.configuration.cameras.iso = .off
        let server = try StudioServer(options: options)
        let client = try ControlClient(socketPath: options.socketPath)
        _ = try client.request("switch", arguments: ["source": "count"])
        _ = try client.request("play", arguments: ["player": "count"])
        let ended = waitUntil(seconds: 20, every: 0.05) {
            (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "count" }?["player"]?["state"] == "ended"
        }
        #expect(ended)
        let late = try client.request("status")["program"]?["late_ticks"]?.intValue ?? -1
        let player = (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"] == "count" }?["player"]
        let counted = "player repeated \(player?["repeated_frames"]?.intValue ?? -1), skipped \(player?["skipped_frames"]?.intValue ?? -1)"
        server.shutdown()

        let shown = try NumberedClips.readAll(try AudioInputsEndToEndTests.programFile(in: recordings))
        var numbers = shown.compactMap { $0.flatMap { abs($0.tint - 200) < 16 ? $0.number : nil } }
        // Cued on 0 before the play, held on 89 after it: between them, each picture once.
        while numbers.first == 0 { numbers.removeFirst() }
        while numbers.last == 89 { numbers.removeLast() }
        #expect(numbers == Array(1...88), "the program's pictures of the clip (late ticks \(late), \(counted)): \(numbers)")
    }
}

/// A player's picture and sound stay together on the recorded program: a clip with a white flash and a
/// 1 kHz beep at the start of every second, looped. Timing-sensitive (real time).
@Suite struct PlayerAVSyncTests {
    @Test func aClipsFlashAndBeepStayTogetherOnProgram() throws {
        let directory = try PlayerEndToEndTests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clip = directory.appendingPathComponent("flash.mp4").path
        let made = try ChildProcess(executable: "/usr/bin/ffmpeg", arguments: [
            "-v", "error", "-f", "lavfi", "-i", "color=c=black:s=320x180:r=30:d=3,drawbox=c=white:t=fill:enable='lt(mod(n,30),1)'",
            "-f", "lavfi", "-i", "aevalsrc='if(lt(mod(t,1),0.05),0.5*sin(2*PI*1000*t),0)|if(lt(mod(t,1),0.05),0.5*sin(2*PI*1000*t),0)':s=48000:d=3",
            "-c:v", "libx264", "-preset", "veryfast", "-g", "30", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", "-y", clip,
        ])
        try #require(made.wait(timeout: 60) == .exited(0), "\(made.errorText())")
        let recordings = directory.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        var options = PlayerEndToEndTests.options(directory, players: [PlayerSpec(name: "flash", items: [clip], end: .loop)])
        options.configuration.recordDirectory = recordings.path
        options.configuration.cameras.iso = .off
        options.configuration.audio.source = .silence
        let server = try StudioServer(options: options)
        let client = try ControlClient(socketPath: options.socketPath)
        _ = try client.request("switch", arguments: ["source": "flash"])
        _ = try client.request("play", arguments: ["player": "flash"])
        try PipeWireEndToEndTests.expectProgramInSync("Player", server: server, client: client, recordings: recordings, frames: 240)
    }
}
