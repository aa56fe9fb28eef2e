import Foundation
import Testing
import Control
import StudioCore
import StudioServer
import StudioSystem
import TestSupport

/// The long A/V drift run of a network camera (scripts/bench-network-drift.sh sets
/// STUDIO_NETWORK_DRIFT_SECONDS; skipped otherwise): a phone (ffmpeg to nginx-rtmp) whose clock runs
/// `STUDIO_NETWORK_DRIFT_PPM` (default 300) fast against this PC's sends a white frame and a 1 kHz beep
/// at the same instant every second of its own time; studio pulls it, keeps it on program and records
/// the program for the whole run. Every minute the camera's buffer, drift estimate and repeated and
/// dropped pictures are printed; at the end, the recording's flash-to-beep offsets, as medians per
/// tenth of the run, and each tenth's median is expected within a frame and a half (the picture rides
/// the program's frame grid) and the buffer at its target: no latency creep, no A/V drift.
@Suite(.serialized) struct NetworkAVDriftBenchmark {
    static let seconds = ProcessInfo.processInfo.environment["STUDIO_NETWORK_DRIFT_SECONDS"].flatMap(Double.init)
    static let ppm = ProcessInfo.processInfo.environment["STUDIO_NETWORK_DRIFT_PPM"].flatMap(Double.init) ?? 300
    /// Seconds between the status lines (default 60).
    static let every = ProcessInfo.processInfo.environment["STUDIO_NETWORK_DRIFT_EVERY"].flatMap(Double.init) ?? 60

    @Test(.enabled(if: seconds != nil)) func aDriftingPhoneStaysInSyncForTheWholeRun() throws {
        let duration = Self.seconds ?? 0
        let scratch = try ScratchStudio("netdrift")
        defer { scratch.remove() }
        let directory = scratch.directory
        let recordings = directory.appendingPathComponent("recordings")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let nginx = try NginxRTMP(prefix: directory.appendingPathComponent("nginx"))
        try nginx.start()
        defer { nginx.stop() }
        let url = nginx.url(stream: "phone1")
        // Its clock runs fast against this PC's.
        let publisher = try NetworkAVSyncTests.flashAndBeepPhone(to: url, directory: directory.appendingPathComponent("publisher"),
                                                                 readRate: 1 + Self.ppm / 1e6)
        defer { _ = publisher.stop() }

        var options = scratch.options()
        options.configuration.program = ProgramFormat(width: 640, height: 360, frameRate: Rational(30, 1))
        options.configuration.recordDirectory = recordings.path
        options.configuration.cameras.iso = .off
        options.configuration.audio.source = .silence
        options.configuration.network.pulls = [NetworkPull(name: "phone1", url: url, latencyMilliseconds: 200)]
        let server = try StudioServer(options: options)
        // A connection per request: the server closes a control connection left idle.
        func request(_ command: String) -> JSONValue? { try? ControlClient(socketPath: options.socketPath).request(command) }
        func phone() -> JSONValue? { request("cameras")?["cameras"]?.arrayValue?.first { $0["name"] == "phone1" } }
        #expect(waitUntil(seconds: 30, every: 0.1) { phone()?["state"] == "live" }, "publisher: \(publisher.errorText())")
        _ = try ControlClient(socketPath: options.socketPath).request("switch", arguments: ["source": .string("phone1")])
        print(String(format: "net-drift: %.0f s, the phone's clock %+.0f ppm against this PC's, %d cores", duration, Self.ppm,
                     ProcessInfo.processInfo.activeProcessorCount))
        print("net-drift: at s | picture buffer ms / target | drift ppm | pictures in, shown, repeated, dropped | sound latency ms, compensation ms, clock ppm | program late ticks")
        let started = MonotonicClock.now()
        var buffers: [Double] = []
        while Double(MonotonicClock.now() - started) / 1e9 < duration {
            _ = waitUntil(seconds: min(Self.every, max(0.1, duration - Double(MonotonicClock.now() - started) / 1e9)), every: 1) { publisher.hasExited }
            #expect(!publisher.hasExited, "the publisher stopped: \(publisher.errorText())")
            let network = phone()?["network"] ?? .null
            let sound = request("audio")?["inputs"]?.arrayValue?.first { $0["name"] == "phone1" } ?? .null
            let late = request("status")?["program"]?["late_ticks"]?.doubleValue ?? -1
            buffers.append(network["buffer_ms"]?.doubleValue ?? -1)
            print(String(format: "net-drift: %4.0f | %4.0f / %.0f | %+.0f | %.0f, %.0f, %.0f, %.0f | %.0f, %.0f, %+.0f | %.0f", Double(MonotonicClock.now() - started) / 1e9,
                         network["buffer_ms"]?.doubleValue ?? -1, network["target_ms"]?.doubleValue ?? -1, network["drift_ppm"]?.doubleValue ?? .nan,
                         network["pictures_in"]?.doubleValue ?? -1, network["pictures_shown"]?.doubleValue ?? -1,
                         network["pictures_repeated"]?.doubleValue ?? -1, network["pictures_dropped"]?.doubleValue ?? -1,
                         sound["latency_ms"]?.doubleValue ?? -1, sound["compensation_ms"]?.doubleValue ?? -1, sound["clock_ppm"]?.doubleValue ?? .nan, late))
            #expect(phone()?["state"] == "live", "\(phone() ?? .null)")
        }
        server.shutdown()

        let events = try PipeWireEndToEndTests.flashesAndBeeps(in: try AudioInputsEndToEndTests.programFile(in: recordings))
        let pairs = PipeWireEndToEndTests.pairs(events)
        try #require(pairs.count >= Int(duration * 0.8), "\(pairs.count) pairs in \(duration) s")
        let span = (pairs.last!.flash - pairs.first!.flash) / 10
        print("net-drift: tenth of the run | pairs | audio minus video (ms): median, min, max")
        for tenth in 0..<10 {
            let from = pairs.first!.flash + Double(tenth) * span
            let offsets = pairs.filter { $0.flash >= from && $0.flash < from + span + (tenth == 9 ? 1 : 0) }.map(\.offset).sorted()
            guard !offsets.isEmpty else { continue }
            let median = offsets[offsets.count / 2]
            print(String(format: "net-drift: %d | %d | %+.1f, %+.1f, %+.1f", tenth + 1, offsets.count, median, offsets.first!, offsets.last!))
            #expect(abs(median) <= 1.5 * 1000 / 30, "tenth \(tenth + 1): audio minus video (ms) \(median)")
        }
        // No latency creep: the buffer at the end within a frame and a half of where it was after a minute.
        if let first = buffers.first, let last = buffers.last {
            print(String(format: "net-drift: buffer after the first minute %.0f ms, at the end %.0f ms", first, last))
            #expect(abs(last - first) <= 50, "the buffer went from \(first) to \(last) ms")
        }
    }
}
