import Foundation
import Testing
import StudioCore
import StudioSystem
import Encoding
import MediaSupport
import Output
import TestSupport

private let streamKey = "sk-live-7f3a9c2e"

/// No event detail, statistic or error may contain the stream key.
private func expectNoStreamKey(_ events: CollectingSink, _ statistics: OutputStatistics, sourceLocation: SourceLocation = #_sourceLocation) {
    for event in events.events {
        for (key, value) in event.details {
            #expect(!value.contains(streamKey), "event \(event.kind) detail \(key) leaks the key", sourceLocation: sourceLocation)
        }
    }
    #expect(!String(describing: statistics).contains(streamKey), sourceLocation: sourceLocation)
}

private func ms(_ value: Double?) -> Int64 { Int64((value ?? -1).rounded()) }

@Suite(.serialized) struct MediaOutputTests {
    init() { FFmpegLogging.configure(verbose: false) }

    @Test func pushesRealH264AndAACToNginxRTMP() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let events = CollectingSink()
        let fanOut = OutputFanOut()
        let feed = try ProgramFeed(fanOut: fanOut)
        let output = MediaOutput(destination: OutputDestination(name: "live", url: nginx.url(stream: streamKey)), events: events,
                                 requestKeyframe: { feed.video.requestKeyframe() })
        feed.run(seconds: 0.5)  // the output joins a running program: the fan-out hands it the formats
        fanOut.add(output)
        output.start()
        feed.run(seconds: 4)
        feed.finish()           // end of stream from both stages reaches the output through the fan-out
        #expect(waitUntil(seconds: 5) { output.statistics.state == .stopped }, "end of stream stops the output")
        output.stop(timeoutSeconds: 2)
        nginx.stop()

        let statistics = output.statistics
        #expect(statistics.state == .stopped)
        // Joining mid-GOP: only the P-frames before the requested keyframe are dropped.
        #expect(statistics.droppedVideo < 15)
        #expect(statistics.reconnectCount == 0)
        #expect(statistics.bytesSent > 10_000)
        #expect(statistics.maskedURL.hasSuffix("/live/****"))
        expectNoStreamKey(events, statistics)
        let connected = try #require(events.events(.outputConnected).first)
        let firstProgramMs = try #require(connected.details["first_program_ms"].flatMap { Int64($0) })
        #expect(firstProgramMs >= 500 && firstProgramMs < 1500, "first keyframe after joining at 0.5 s")
        #expect(statistics.firstProgramMillisecondsOfConnection == firstProgramMs)

        let recordings = nginx.recordings()
        #expect(recordings.count == 1)
        let file = try #require(recordings.first)
        let probe = try MediaProbe.probe(file)
        let video = try #require(probe.video)
        let audio = try #require(probe.audio)
        #expect(video.codecName == "h264" && video.width == 320 && video.height == 180)
        #expect(audio.codecName == "aac" && audio.sampleRate == 48_000 && audio.channels == 2)
        let videoPackets = probe.videoPackets, audioPackets = probe.audioPackets
        let expectedFrames = Double(feed.framesFed) - Double(firstProgramMs) * 30 / 1000
        #expect(abs(Double(videoPackets.count) - expectedFrames) <= 3, "\(videoPackets.count) frames, expected about \(expectedFrames)")
        #expect(abs(Double(audioPackets.count) - expectedFrames / 30 * 46.875) <= 6)
        #expect(probe.packets.first?.codecType == "video" && probe.packets.first?.isKeyframe == true)
        // nginx-rtmp records the publisher's timestamps as they are: program time, not shifted to 0.
        #expect(ms(videoPackets.first?.dtsMilliseconds) == firstProgramMs)
        for packets in [videoPackets, audioPackets] {
            let dts = packets.compactMap(\.dtsMilliseconds)
            #expect(dts.count == packets.count && zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 }, "monotonic timestamps")
        }
        let decoded = try MediaProbe.decodeCheck(file)
        #expect(decoded.clean, "\(decoded.errors)")
        #expect(decoded.videoFrames == videoPackets.count)
    }

    @Test func reconnectsAfterTheServerGoesAwayAndKeepsProgramTime() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let events = CollectingSink()
        let fanOut = OutputFanOut()
        let feed = try ProgramFeed(fanOut: fanOut)
        let policy = OutputPolicy(initialBackoffSeconds: 0.5, maxBackoffSeconds: 1)
        let output = MediaOutput(destination: OutputDestination(name: "live", url: nginx.url(stream: streamKey)), events: events,
                                 requestKeyframe: { feed.video.requestKeyframe() }, policy: policy)
        fanOut.add(output)
        output.start()
        feed.run(seconds: 2)
        // Connected for two seconds: the bit rate of the last window is what the bytes say.
        let connected = output.statistics
        #expect(connected.bitsPerSecond > 0 && connected.nextAttemptAt == nil)
        let average = Double(connected.bytesSent) * 8 / 2  // bits per second over the two seconds fed
        #expect(Double(connected.bitsPerSecond) > average / 4 && Double(connected.bitsPerSecond) < average * 4,
                "\(connected.bitsPerSecond) bit/s, against \(Int(average)) on average")
        nginx.stop()
        let downAt = feed.framesFed
        feed.run(seconds: 2.5)
        #expect(output.statistics.state == .reconnecting)
        // Between attempts the output says when it tries next: within the policy's backoff from now.
        #expect(waitUntil(seconds: 3) { output.statistics.nextAttemptAt != nil })
        let waiting = output.statistics
        #expect(waiting.bitsPerSecond == 0)
        if let next = waiting.nextAttemptAt {
            #expect(next <= MonotonicClock.now() + UInt64(policy.maxBackoffSeconds * 1e9), "next attempt within the backoff")
        }
        try nginx.restart()
        let upAt = feed.framesFed
        feed.run(seconds: 2.5)
        feed.finish()
        output.stop(timeoutSeconds: 3)
        nginx.stop()

        let statistics = output.statistics
        expectNoStreamKey(events, statistics)
        #expect(statistics.reconnectCount == 1)
        #expect(statistics.reconnectAttempts >= 2)
        #expect(statistics.lastError == nil, "connected again: the error that ended the last try is history")
        let kinds = events.outputKinds
        let firstDisconnect = try #require(kinds.firstIndex(of: "output_disconnected"))
        let firstAttempt = try #require(kinds.firstIndex(of: "output_reconnect_attempt"))
        let reconnected = try #require(kinds.firstIndex(of: "output_reconnected"))
        #expect(kinds.first == "output_connected")
        #expect(firstDisconnect < firstAttempt && firstAttempt < reconnected, "\(kinds)")
        #expect(kinds.filter { $0 == "output_reconnected" }.count == 1)
        let disconnect = try #require(events.events(.outputDisconnected).first)
        #expect(disconnect.details["error"]?.isEmpty == false)
        #expect(disconnect.details["url"]?.hasSuffix("/live/****") == true)

        let first = try #require(events.events(.outputConnected).first?.details["first_program_ms"].flatMap { Int64($0) })
        let second = try #require(events.events(.outputReconnected).first?.details["first_program_ms"].flatMap { Int64($0) })
        let recordings = nginx.recordings()
        #expect(recordings.count == 2)
        guard recordings.count == 2 else { return }
        let before = try MediaProbe.probe(recordings[0]), after = try MediaProbe.probe(recordings[1])
        #expect(after.packets.first?.codecType == "video" && after.packets.first?.isKeyframe == true,
                "the new connection starts with a keyframe")
        // Both recordings carry program time: the first starts at its connection's first keyframe, the
        // second continues later on the same timeline (never reset to 0).
        #expect(ms(before.videoPackets.first?.dtsMilliseconds) == first)
        #expect(ms(after.videoPackets.first?.dtsMilliseconds) == second)
        let lastBefore = ms(before.videoPackets.last?.dtsMilliseconds)
        #expect(second > lastBefore, "program time continues across the reconnect")
        #expect(lastBefore <= Int64(downAt) * 1000 / 30 + 100, "nothing after the server went down is in the first file")
        // The queue keeps up to 2.5 s of video while disconnected, so the reconnection may start with
        // media from before the restart, but never older than the queue limit.
        #expect(second >= Int64(upAt) * 1000 / 30 - 2600)
        for packets in [after.videoPackets, after.audioPackets] {
            let dts = packets.compactMap(\.dtsMilliseconds)
            #expect(zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 })
        }
        #expect(try MediaProbe.decodeCheck(recordings[1]).clean)
    }

    @Test func recordsMatroskaThatPlaysEvenWithoutATrailer() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("program.mkv")
        let events = CollectingSink()
        let fanOut = OutputFanOut()
        let feed = try ProgramFeed(fanOut: fanOut)
        let output = MediaOutput(destination: OutputDestination(name: "recording", url: path.path), events: events,
                                 requestKeyframe: { feed.video.requestKeyframe() })
        fanOut.add(output)
        output.start()
        feed.run(seconds: 2.5)
        // What a killed server leaves behind: the file as it is now, no trailer.
        let truncated = directory.appendingPathComponent("killed.mkv")
        try FileManager.default.copyItem(at: path, to: truncated)
        feed.run(seconds: 1.5)
        feed.finish()
        output.stop(timeoutSeconds: 3)

        #expect(output.statistics.state == .stopped)
        #expect(events.events(.recordingStarted).first?.details["first_program_ms"] == "0")
        #expect(events.events(.recordingStopped).count == 1)

        let partial = try MediaProbe.probe(truncated)
        #expect(partial.video?.codecName == "h264" && partial.audio?.codecName == "aac")
        #expect(partial.videoPackets.count >= 30, "complete GOPs were flushed to disk: \(partial.videoPackets.count) frames")
        #expect(try MediaProbe.decodeCheck(truncated).videoFrames == partial.videoPackets.count)

        let full = try MediaProbe.probe(path)
        #expect(full.formatName.contains("matroska"))
        #expect(full.videoPackets.count == feed.framesFed, "every frame recorded")
        #expect(ms(full.videoPackets.first?.ptsMilliseconds) == 0)
        let decoded = try MediaProbe.decodeCheck(path)
        #expect(decoded.clean, "\(decoded.errors)")
        // Frame i of the tiny decode is frame i of the probe: red before 2 s, blue after.
        let frames = try MediaProbe.videoFrames(path)
        let pictures = try MediaProbe.tinyFrames(path)
        #expect(frames.count == pictures.count && frames.count == feed.framesFed)
        for (frame, picture) in zip(frames, pictures) {
            let colour = MediaProbe.averageColour(picture)
            let time = frame.ptsMilliseconds ?? -1
            if time < 1990 { #expect(colour.red > colour.blue + 50, "red at \(time) ms") }
            else if time > 2010 { #expect(colour.blue > colour.red + 50, "blue at \(time) ms") }
        }
    }

    @Test func anUnwritableRecordingFailsAloneWithAnErrorEvent() throws {
        let events = CollectingSink()
        let fanOut = OutputFanOut()
        let feed = try ProgramFeed(fanOut: fanOut)
        let output = MediaOutput(destination: OutputDestination(name: "recording", url: "/nonexistent-studio-dir/sub/program.mkv"),
                                 events: events, requestKeyframe: { feed.video.requestKeyframe() })
        fanOut.add(output)
        output.start()
        feed.run(seconds: 0.5)
        #expect(waitUntil(seconds: 5) { output.statistics.state == .failed })
        feed.run(seconds: 0.3)  // the show goes on: delivering to the failed output neither blocks nor crashes
        feed.finish()
        output.stop(timeoutSeconds: 1)
        #expect(output.statistics.state == .failed)
        let error = try #require(events.events(.error).first)
        #expect(error.details["output"] == "recording")
        #expect(error.details["error"]?.contains("avio_open2") == true)
        #expect(feed.video.statistics.packetsOut >= 20)
    }

    @Test func aRefusedConnectionRetriesWithBackoffAndMasksTheKey() throws {
        let port = try freePort()
        let events = CollectingSink()
        let output = MediaOutput(destination: OutputDestination(name: "live", url: "rtmp://127.0.0.1:\(port)/live/\(streamKey)"),
                                 events: events, requestKeyframe: {}, policy: OutputPolicy(initialBackoffSeconds: 0.2, maxBackoffSeconds: 0.4))
        let fanOut = OutputFanOut()
        let feed = try ProgramFeed(fanOut: fanOut)
        fanOut.add(output)
        output.start()
        feed.run(seconds: 1.5)
        let started = MonotonicClock.now()
        output.stop(timeoutSeconds: 1)
        #expect(Double(MonotonicClock.now() - started) / 1e9 < 1.5, "stop never hangs")
        feed.finish()
        let statistics = output.statistics
        #expect(statistics.reconnectAttempts >= 2)
        #expect(statistics.lastError?.contains("Connection refused") == true, "\(statistics.lastError ?? "")")
        #expect(events.events(.outputReconnectAttempt).count == statistics.reconnectAttempts)
        #expect(events.events(.outputConnected).isEmpty)
        expectNoStreamKey(events, statistics)
    }

    /// nginx-rtmp refuses a second publisher on a key that is live: librtmp reports that as "Input/output
    /// error" or "Operation not permitted", which the output puts in an operator's words.
    @Test func aServerThatRefusesTheStreamIsSaidInPlainWords() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let url = nginx.url(stream: streamKey)
        let fanOut = OutputFanOut()
        let feed = try ProgramFeed(fanOut: fanOut)
        let events = CollectingSink()
        let first = MediaOutput(destination: OutputDestination(name: "first", url: url), events: DiscardingEventSink(),
                                requestKeyframe: { feed.video.requestKeyframe() })
        let second = MediaOutput(destination: OutputDestination(name: "second", url: url), events: events,
                                 requestKeyframe: { feed.video.requestKeyframe() },
                                 policy: OutputPolicy(initialBackoffSeconds: 0.2, maxBackoffSeconds: 0.4))
        fanOut.add(first)
        first.start()
        feed.run(seconds: 1)
        #expect(first.statistics.state == .connected)
        fanOut.add(second)
        second.start()
        feed.run(seconds: 1.5)
        let refused = second.statistics
        first.stop(timeoutSeconds: 2)
        second.stop(timeoutSeconds: 2)
        feed.finish()
        #expect(refused.lastError?.contains("the server refused the stream (check the stream key") == true,
                "\(refused.lastError ?? "no error")")
        #expect(events.events(.error).first?.details["error"]?.contains("refused the stream") == true)
        expectNoStreamKey(events, refused)
    }

    @Test func aStalledServerCostsVideoBeforeAudioAndStopDoesNotHang() throws {
        // A listener that completes TCP connects (kernel backlog) but never answers the RTMP handshake.
        let listener = try BlackholeListener()
        let events = CollectingSink()
        let policy = OutputPolicy(queueLimits: .init(maxVideoSeconds: 1, maxAudioSeconds: 5), connectTimeoutSeconds: 10)
        let output = MediaOutput(destination: OutputDestination(name: "live", url: "rtmp://127.0.0.1:\(listener.port)/live/\(streamKey)"),
                                 events: events, requestKeyframe: {}, policy: policy)
        let fanOut = OutputFanOut()
        let feed = try ProgramFeed(fanOut: fanOut)
        fanOut.add(output)
        output.start()
        feed.run(seconds: 3)
        #expect(output.statistics.state == .connecting)
        let backlog = output.statistics
        #expect(backlog.droppedVideo > 30, "about 2 s of video dropped: \(backlog.droppedVideo)")
        #expect(backlog.droppedAudio == 0, "audio under its limit is kept")
        let started = MonotonicClock.now()
        output.stop(timeoutSeconds: 1)
        #expect(Double(MonotonicClock.now() - started) / 1e9 < 1.5, "stop interrupts the blocked connect")
        feed.finish()
        expectNoStreamKey(events, output.statistics)
        // The congestion is warned about (the first drop at once, the rest summed at most every 5 s and at
        // the end), and the reports add up to every congestion drop.
        let warnings = events.events(.framesDropped)
        #expect(!warnings.isEmpty && warnings.allSatisfy { $0.details["stage"] == "out.live" }, "\(warnings)")
        let warned = warnings.compactMap { $0.details["dropped"].flatMap { Int($0) } }.reduce(0, +)
        let final = output.statistics
        #expect(warned == final.droppedVideo + final.droppedAudio && warned >= backlog.droppedVideo, "\(warned) warned, \(final.droppedVideo) dropped")
    }

    @Test func encoderFallbackMidStreamSendsANewSequenceHeaderOnTheSameFLVConnection() throws {
        let nginx = try NginxRTMP()
        try nginx.start()
        defer { nginx.stop() }
        let events = CollectingSink()
        let fanOut = OutputFanOut()
        let failing = FaultInjectingEncoder(wrapping: try X264Encoder(settings: testSettings), failAfterFrames: 45)
        var fallbackSettings = testSettings
        fallbackSettings.preset = "superfast"  // a different encoder configuration: a different avcC
        let feed = try ProgramFeed(fanOut: fanOut, events: events, encoder: failing,
                                   fallback: { [fallbackSettings] in try X264Encoder(settings: fallbackSettings) })
        let output = MediaOutput(destination: OutputDestination(name: "live", url: nginx.url(stream: streamKey)), events: events,
                                 requestKeyframe: { feed.video.requestKeyframe() })
        fanOut.add(output)
        output.start()
        feed.run(seconds: 3)
        feed.finish()
        output.stop(timeoutSeconds: 3)
        nginx.stop()

        #expect(events.events(.encoderFallback).count == 1)
        #expect(events.events(.outputDisconnected).isEmpty, "same connection")
        #expect(output.statistics.reconnectCount == 0)
        let file = try #require(nginx.recordings().first)
        #expect(nginx.recordings().count == 1)
        let probe = try MediaProbe.probe(file)
        let keyframes = probe.videoPackets.filter(\.isKeyframe).compactMap { ms($0.dtsMilliseconds) }
        #expect(keyframes.contains(1500), "the fallback encoder's first frame (45 at 30 fps) is a keyframe: \(keyframes)")
        let dts = probe.videoPackets.compactMap(\.dtsMilliseconds)
        #expect(zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 })
        let decoded = try MediaProbe.decodeCheck(file)
        #expect(decoded.clean, "\(decoded.errors)")
        #expect(decoded.videoFrames == probe.videoPackets.count)
        #expect(probe.videoPackets.count >= feed.framesFed - 2)
    }

    @Test func encoderFallbackMidStreamStartsANewMatroskaFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("program.mkv")
        let events = CollectingSink()
        let fanOut = OutputFanOut()
        let failing = FaultInjectingEncoder(wrapping: try X264Encoder(settings: testSettings), failAfterFrames: 40)
        var fallbackSettings = testSettings
        fallbackSettings.preset = "superfast"
        let feed = try ProgramFeed(fanOut: fanOut, events: events, encoder: failing,
                                   fallback: { [fallbackSettings] in try X264Encoder(settings: fallbackSettings) })
        let output = MediaOutput(destination: OutputDestination(name: "recording", url: path.path), events: events,
                                 requestKeyframe: { feed.video.requestKeyframe() })
        fanOut.add(output)
        output.start()
        feed.run(seconds: 2.5)
        feed.finish()
        output.stop(timeoutSeconds: 3)

        let second = directory.appendingPathComponent("program-g1.mkv")
        #expect(output.statistics.currentFile == second.path)
        #expect(events.events(.recordingStarted).map { $0.details["first_program_ms"] } == ["0", "1333"])
        let before = try MediaProbe.probe(path), after = try MediaProbe.probe(second)
        #expect(before.videoPackets.count == 40)
        #expect(after.videoPackets.first?.isKeyframe == true)
        #expect(ms(after.videoPackets.first?.ptsMilliseconds) == 1333)
        // Every frame the encoder took is in one of the two files (a loaded machine may make the encoder's
        // queue refuse some of the real-time feed: those never reached the output and are counted apart).
        let encoded = feed.video.statistics.framesIn
        #expect(encoded + feed.video.statistics.framesDropped == feed.framesFed)
        #expect(before.videoPackets.count + after.videoPackets.count == encoded, "no frame lost across the switch")
        #expect(try MediaProbe.decodeCheck(path).clean)
        #expect(try MediaProbe.decodeCheck(second).clean)
    }

    @Test func fanOutEndsOutputsOnlyAfterEveryProducerEnded() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fanOut = OutputFanOut(expectedEndOfStreams: 2)
        let feed = try ProgramFeed(fanOut: fanOut)
        feed.run(seconds: 0.3)
        #expect(fanOut.latestFormats.video?.codec == .h264 && fanOut.latestFormats.audio?.codec == .aac)
        let output = MediaOutput(destination: OutputDestination(name: "rec", url: directory.appendingPathComponent("late.flv").path),
                                 events: DiscardingEventSink(), requestKeyframe: { feed.video.requestKeyframe() })
        fanOut.add(output)  // late: gets both formats from the fan-out before any packet
        #expect(fanOut.outputs.count == 1)
        output.start()
        feed.run(seconds: 1)
        #expect(output.statistics.state == .connected)
        feed.audio.finish()
        MonotonicClock.sleep(seconds: 0.3)
        #expect(output.statistics.state == .connected, "one producer ending is not the end of the program")
        feed.video.finish()
        #expect(waitUntil(seconds: 5) { output.statistics.state == .stopped })
        #expect(fanOut.remove(output) && fanOut.outputs.isEmpty)
        let probe = try MediaProbe.probe(directory.appendingPathComponent("late.flv"))
        #expect(probe.formatName == "flv" && probe.video != nil && probe.audio != nil)
        #expect(probe.packets.first?.isKeyframe == true && probe.packets.first?.codecType == "video")
    }
}
