import CSRT
import Foundation
import Testing
import Control
import StudioCore
import StudioServer
import StudioSystem
import TestSupport

/// Fifty SRT callers at once on the listener's port (the issue's "50 callers at once"): 48 with stream
/// ids the config does not name, and the two it names (anna, ben), all started in the same instant by
/// libsrt in this process (non-blocking connects). Every stranger is refused at the handshake with the
/// listener's reason (SRT_REJX_FORBIDDEN) and a history event each; the two named callers get in; the
/// studio runs on; and afterwards a real publisher as anna takes her place and goes live. Before any
/// caller came, the two were starting, with no loss in the history; once anna sent pictures, her
/// publisher's end is a loss.
@Suite(.serialized) struct NetworkCallerStormTests {
    /// libsrt callers connecting at once; `states` and `rejectReasons` read them as the handshakes end.
    final class Callers {
        let sockets: [SRTSOCKET]
        init(port: Int, streamIDs: [String]) throws {
            srt_startup()
            var sockets: [SRTSOCKET] = []
            for id in streamIDs {
                let socket = srt_create_socket()
                try #require(socket != SRT_INVALID_SOCK)
                var no: Int32 = 0, timeout: Int32 = 10_000
                srt_setsockflag(socket, SRTO_RCVSYN, &no, Int32(MemoryLayout<Int32>.size))
                srt_setsockflag(socket, SRTO_CONNTIMEO, &timeout, Int32(MemoryLayout<Int32>.size))
                _ = id.withCString { srt_setsockflag(socket, SRTO_STREAMID, $0, Int32(strlen($0))) }
                var address = NginxRTMP.loopbackAddress(port: port)
                let started = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { srt_connect(socket, $0, Int32(MemoryLayout<sockaddr_in>.size)) }
                }
                try #require(started != SRT_ERROR, "srt_connect \(id): \(String(cString: srt_getlasterror_str()))")
                sockets.append(socket)
            }
            self.sockets = sockets
        }
        var states: [SRT_SOCKSTATUS] { sockets.map { srt_getsockstate($0) } }
        func rejectReason(_ index: Int) -> Int32 { srt_getrejectreason(sockets[index]) }
        func close() {
            for socket in sockets { srt_close(socket) }
            srt_cleanup()
        }
    }

    @Test func fiftyCallersAtOnceStrangersRefusedWithAReasonTheNamedOnesIn() throws {
        let scratch = try ScratchStudio("storm")
        defer { scratch.remove() }
        let port = try NginxRTMP.freePort()
        var options = scratch.options()
        options.configuration.network.srt = SRTListenerSpec(listen: ListenAddress(host: "127.0.0.1", port: UInt16(port)),
                                                            callers: [.init(name: "anna"), .init(name: "ben")])
        let server = try StudioServer(options: options)
        defer { server.shutdown() }
        let client = try ControlClient(socketPath: options.socketPath)
        func camera(_ name: String) -> JSONValue? { (try? client.request("cameras"))?["cameras"]?.arrayValue?.first { $0["name"]?.stringValue == name } }
        func refusals() -> [JSONValue] {
            ((try? client.request("log", arguments: ["kind": "ingest_refused", "limit": 500]))?["events"]?.arrayValue ?? [])
                .filter { $0["details"]?["protocol"] == "srt" }
        }

        func losses(_ name: String) -> [JSONValue] {
            ((try? client.request("log", arguments: ["kind": "camera_lost", "camera": .string(name)]))?["events"]?.arrayValue ?? [])
        }
        // Waiting for their callers, anna and ben are starting, not lost: no loss in the history for a
        // camera whose source has not come yet, however long it takes (three loss timeouts here).
        let lostWhileWaiting = waitUntil(seconds: 1.5, every: 0.1) { !losses("anna").isEmpty || !losses("ben").isEmpty }
        #expect(!lostWhileWaiting, "\(losses("anna")) \(losses("ben"))")
        #expect(camera("anna")?["state"] == "starting" && camera("ben")?["state"] == "starting", "\(camera("anna") ?? .null)")

        let strangers = (1...48).map { "stranger-\($0)" }
        let callers = try Callers(port: port, streamIDs: strangers + ["anna", "#!::r=ben,m=publish"])
        defer { callers.close() }
        let ended = waitUntil(seconds: 30, every: 0.05) { callers.states.allSatisfy { $0 != SRTS_CONNECTING && $0 != SRTS_INIT && $0 != SRTS_OPENED } }
        let states = callers.states
        #expect(ended, "handshakes still going: \(states.map(\.rawValue))")
        let refused = strangers.indices.filter { states[$0] != SRTS_CONNECTED }
        #expect(refused.count == strangers.count, "strangers that got in: \(strangers.indices.filter { states[$0] == SRTS_CONNECTED })")
        let reasons = Set(refused.map { callers.rejectReason($0) })
        #expect(reasons == [csrt_reject_forbidden()], "the strangers' reject reasons: \(reasons)")
        #expect(states[48] == SRTS_CONNECTED && states[49] == SRTS_CONNECTED, "anna and ben: \(states[48].rawValue), \(states[49].rawValue)")

        // Each refusal in the history with its reason; the studio runs on.
        var events: [JSONValue] = []
        #expect(waitUntil(seconds: 10, every: 0.1) { events = refusals(); return events.count >= strangers.count }, "\(events.count) refusals in the history")
        #expect(events.count == strangers.count, "one refusal per stranger: \(events.count)")
        #expect(events.allSatisfy { $0["details"]?["reason"]?.stringValue == "an unknown stream id" }, "\(events.first ?? .null)")
        #expect(camera("cam1")?["state"] == "live", "the studio runs on: \(camera("cam1") ?? .null)")

        // A real publisher as anna replaces the silent caller at once and goes live.
        let publisher = try SRTListenerEndToEndTests.caller(port: port, streamID: "anna", passphrase: "", colour: "E614A0",
                                                            directory: scratch.directory.appendingPathComponent("anna"))
        defer { _ = publisher.stop() }
        #expect(waitUntil(seconds: 30, every: 0.1) { camera("anna")?["state"] == "live" }, "\(camera("anna") ?? .null); \(publisher.errorText())")
        // Once she has sent pictures, her silence is a loss like any camera's.
        #expect(losses("anna").isEmpty, "\(losses("anna"))")
        _ = publisher.stop()
        #expect(waitUntil(seconds: 10, every: 0.1) { !losses("anna").isEmpty }, "no camera_lost for anna after her publisher stopped")
    }
}
