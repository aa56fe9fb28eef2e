import Foundation
import Testing
import Control
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP API against the real `studio serve`: the same JSON as the CLI's `--json`, the same commands
/// (a switch lands), every error status, the token, Origin, the request budget, and the event stream.
@Suite struct HTTPAPIEndToEndTests {
    /// Starts a demo server with the HTTP API on a free loopback port.
    static func serve(_ studio: StudioHarness, extra: [String] = []) throws -> Int {
        let port = try NginxRTMP.freePort()
        try studio.serve(["--cameras", "3", "--http", "127.0.0.1:\(port)"] + EndToEndTests.smallProgram + extra)
        return port
    }

    static func json(_ response: HTTPTestClient.Response) throws -> JSONValue { try JSONValue(parsing: response.body) }

    /// The keys of every object in `value`, by path: two answers of the same shape have the same set.
    static func shape(_ value: JSONValue, _ path: String = "") -> Set<String> {
        switch value {
        case .object(let members):
            return members.reduce(into: Set<String>()) { shape, member in
                shape.insert(path + "." + member.key)
                shape.formUnion(Self.shape(member.value, path + "." + member.key))
            }
        case .array(let elements): return elements.reduce(into: Set<String>()) { $0.formUnion(shape($1, path + "[]")) }
        default: return []
        }
    }

    @Test func routesAnswerTheCLIsJSONAndASwitchLands() throws {
        let studio = try StudioHarness()
        // An output whose stream key must not show (nothing listens there: it keeps reconnecting).
        let port = try Self.serve(studio, extra: ["--rtmp", "rtmp://127.0.0.1:9/live/secretkey123"])
        #expect(studio.waitForProgramFrames(3), "the program is on air (its tally is in status)")

        // The same JSON as `studio ... --json`: equal where nothing moves, the same shape where counters do.
        let status = try HTTPTestClient.fetch(port: port, "GET", "/api/v1/status")
        #expect(status.status == 200 && status.headers["content-type"] == "application/json", "\(status)")
        let httpShape = Self.shape(try Self.json(status)), cliShape = Self.shape(try studio.json(["status"]))
        #expect(httpShape == cliShape, "only over HTTP: \(httpShape.subtracting(cliShape)); only from the CLI: \(cliShape.subtracting(httpShape))")
        let cameras = try Self.json(HTTPTestClient.fetch(port: port, "GET", "/api/v1/cameras"))
        let cliCameras = try studio.json(["cameras"])
        #expect(Self.shape(cameras) == Self.shape(cliCameras))
        #expect(cameras["cameras"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["cam1", "cam2", "cam3"])
        #expect(try Self.json(HTTPTestClient.fetch(port: port, "GET", "/api/v1/scenes")) == (try studio.json(["scenes"])))
        let sessions = try Self.json(HTTPTestClient.fetch(port: port, "GET", "/api/v1/sessions"))
        #expect(sessions == (try studio.json(["sessions"])))
        let session = try #require(try Self.json(status)["session"]?.intValue)
        let events = try HTTPTestClient.fetch(port: port, "GET", "/api/v1/sessions/\(session)/events")
        let cliLog = try studio.json(["log"])
        let httpEvents = try #require(try Self.json(events)["events"]?.arrayValue)
        #expect(httpEvents.count >= 1 && Array((cliLog["events"]?.arrayValue ?? []).prefix(httpEvents.count)) == httpEvents,
                "the log's events as `studio log --json` lists them")
        let limited = try Self.json(HTTPTestClient.fetch(port: port, "GET", "/api/v1/sessions?limit=1"))
        #expect(limited["sessions"]?.arrayValue?.count == 1, "query items are arguments")

        // A switch through the API is the socket's switch: answered once on air, seen by `status`.
        let switched = try HTTPTestClient.fetch(port: port, "POST", "/api/v1/switch", body: Array("{\"source\":\"cam2\"}".utf8))
        #expect(switched.status == 200, "\(switched)")
        #expect(try Self.json(switched)["source"] == "cam2" && Self.json(switched)["program_ms"]?.intValue != nil, "\(switched)")
        #expect(try studio.json(["status"])["program"]?["source"] == "cam2")
        // Path parameters become arguments, and errors are the socket's: a test-pattern camera's controls.
        let controls = try HTTPTestClient.fetch(port: port, "GET", "/api/v1/camera/cam2/controls")
        let cli = try studio.run(["controls", "cam2", "--json", "--socket", studio.socket])
        let message = try #require(try Self.json(controls)["error"]?["message"]?.stringValue)
        #expect(controls.status == 400 && cli.status != 0 && cli.error.contains(message), "\(controls) / \(cli.error)")
        // Metrics are Prometheus text, the `metrics` command's, not JSON; focus is the socket's focus.
        let metrics = try HTTPTestClient.fetch(port: port, "GET", "/metrics")
        #expect(metrics.status == 200 && metrics.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true, "\(metrics)")
        #expect(metrics.text.contains("# TYPE studio_program_frames_total counter") && !metrics.text.hasPrefix("{"), "\(metrics.text.prefix(300))")
        let focus = try HTTPTestClient.fetch(port: port, "POST", "/api/v1/camera/cam1/focus", body: Array("{\"x\":0.4,\"y\":0.6}".utf8))
        let focusReply = try Self.json(focus)
        #expect(focus.status == 200 && focusReply["method"] == "none", "\(focus)")
        // No response carries the stream key: status masks it, the session's config snapshot too.
        #expect(status.text.contains("rtmp://127.0.0.1:9/live/****"), "\(status)")
        for path in ["/api/v1/status", "/api/v1/sessions", "/api/v1/sessions/\(session)/events", "/api/v1/cameras"] {
            let response = try HTTPTestClient.fetch(port: port, "GET", path)
            #expect(response.status == 200 && !response.text.contains("secretkey123"), "\(path): \(response)")
        }
    }

    @Test func everyErrorHasItsStatusAndJSONBody() throws {
        let studio = try StudioHarness()
        let port = try Self.serve(studio)
        func expectError(_ response: HTTPTestClient.Response, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(response.status == status, "\(response)", sourceLocation: sourceLocation)
            let error = (try? Self.json(response))?["error"]
            #expect(error?["code"]?.stringValue == code && error?["message"]?.stringValue?.isEmpty == false, "\(response)",
                    sourceLocation: sourceLocation)
        }
        expectError(try HTTPTestClient.fetch(port: port, "POST", "/api/v1/switch", body: Array("{\"source\":".utf8)), 400, "bad_request")
        expectError(try HTTPTestClient.fetch(port: port, "POST", "/api/v1/switch", body: Array("[1]".utf8)), 400, "bad_request")
        expectError(try HTTPTestClient.fetch(port: port, "POST", "/api/v1/switch", body: Array("{\"source\":5}".utf8)), 400, "invalid_argument")
        expectError(try HTTPTestClient.fetch(port: port, "GET", "/api/v1/nothing"), 404, "not_found")
        expectError(try HTTPTestClient.fetch(port: port, "POST", "/api/v1/switch", body: Array("{\"source\":\"cam9\"}".utf8)), 404, "unknown_camera")
        expectError(try HTTPTestClient.fetch(port: port, "GET", "/api/v1/camera/cam9/controls"), 404, "unknown_camera")
        let wrongMethod = try HTTPTestClient.fetch(port: port, "GET", "/api/v1/switch")
        expectError(wrongMethod, 405, "method_not_allowed")
        #expect(wrongMethod.headers["allow"] == "POST")
        expectError(try HTTPTestClient.fetch(port: port, "POST", "/api/v1/switch", body: [UInt8](repeating: 0x20, count: 70_000)), 413, "too_large")
        expectError(try HTTPTestClient.fetch(port: port, "POST", "/api/v1/cut", headers: ["Origin": "http://evil.example"]), 403, "forbidden")
        // A page that reached the console by a DNS name (rebinding) is refused without a token.
        expectError(try HTTPTestClient.fetch(port: port, "GET", "/api/v1/status", headers: ["Host": "evil.example:\(port)"]), 403, "forbidden")

        // One client flooding: refused 429 once its budget is spent, while the show and others go on.
        let flood = try HTTPTestClient(port: port)
        let request = HTTPTestClient.requestBytes("GET", "/api/v1/ping", headers: ["Connection": "keep-alive"])
        var throttled = 0
        for _ in 0..<400 where throttled == 0 {
            try flood.send(request)
            let response = try flood.readResponse()
            if response.status == 429 {
                throttled += 1
                expectError(response, 429, "too_many_requests")
                #expect(response.headers["retry-after"] != nil)
            } else {
                #expect(response.status == 200, "\(response)")
            }
        }
        #expect(throttled == 1, "400 requests at once are over the budget")
        #expect((try? studio.status()) != nil, "the control socket still answers")
    }

    @Test func aTokenIsNeededWhereConfiguredAndOnNonLoopbackAddresses() throws {
        // On loopback, with http.token in the config: every request needs it.
        let studio = try StudioHarness()
        let config = studio.directory.appendingPathComponent("studio.yaml")
        try "http:\n  token: tok-0123456789abcdef\n".write(to: config, atomically: true, encoding: .utf8)
        let port = try Self.serve(studio, extra: ["--config", config.path])
        let refused = try HTTPTestClient.fetch(port: port, "GET", "/api/v1/status")
        #expect(refused.status == 401 && refused.text.contains("\"code\":\"unauthorized\""), "\(refused)")
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/api/v1/status", headers: ["Authorization": "Bearer wrong-0123456789abcdef"]).status == 401)
        #expect(try HTTPTestClient.fetch(port: port, "GET", "/api/v1/events").status == 401, "the event stream too")
        let allowed = try HTTPTestClient.fetch(port: port, "GET", "/api/v1/status", headers: ["Authorization": "Bearer tok-0123456789abcdef"])
        #expect(allowed.status == 200, "\(allowed)")
        let sessions = try studio.json(["sessions"])
        #expect(!allowed.text.contains("tok-0123456789abcdef") && !sessions.jsonText.contains("tok-0123456789abcdef"),
                "the token is not in any answer (nor the session's config snapshot)")
        _ = studio.stopServer()

        // On every interface (0.0.0.0) without one: generated at first start, kept 0600 next to the database.
        let open = try StudioHarness()
        let openPort = try NginxRTMP.freePort()
        try open.serve(["--cameras", "1", "--http", "0.0.0.0:\(openPort)"] + EndToEndTests.smallProgram)
        let tokenFile = (open.database as NSString).deletingLastPathComponent + "/http-token"
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.count >= 32)
        var info = stat()
        #expect(stat(tokenFile, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try HTTPTestClient.fetch(port: openPort, "GET", "/api/v1/status").status == 401)
        #expect(try HTTPTestClient.fetch(port: openPort, "GET", "/api/v1/status", headers: ["Authorization": "Bearer \(token)"]).status == 200)
        // `studio doctor` says where it is.
        let doctor = try open.run(["doctor", "--db", open.database, "--http", "0.0.0.0:\(openPort)", "--cameras", "0"])
        #expect(doctor.output.contains(tokenFile), "\(doctor.output)")
        // The next start keeps it.
        _ = open.stopServer()
        try open.serve(["--cameras", "1", "--http", "0.0.0.0:\(openPort)"] + EndToEndTests.smallProgram)
        #expect(try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) == token)
        #expect(try HTTPTestClient.fetch(port: openPort, "GET", "/api/v1/status", headers: ["Authorization": "Bearer \(token)"]).status == 200)
    }

    @Test func theEventStreamDeliversASwitchAndASlowClientStallsNothing() throws {
        let studio = try StudioHarness()
        let port = try Self.serve(studio)
        let reader = try HTTPTestClient(port: port)
        try reader.send(HTTPTestClient.requestBytes("GET", "/api/v1/events"))
        let head = String(decoding: reader.read { String(decoding: $0, as: UTF8.self).contains(": subscribed") }, as: UTF8.self)
        #expect(head.contains("200") && head.contains("text/event-stream"), "\(head)")
        // A client that asks for the stream and never reads it.
        let slow = try HTTPTestClient(port: port, receiveBuffer: 1024)
        try slow.send(HTTPTestClient.requestBytes("GET", "/api/v1/events"))

        let switched = try HTTPTestClient.fetch(port: port, "POST", "/api/v1/switch", body: Array("{\"source\":\"cam3\"}".utf8))
        #expect(switched.status == 200, "\(switched)")
        let line = "data: {\"event\":{"
        let received = String(decoding: reader.read { String(decoding: $0, as: UTF8.self).contains("\"camera\":\"cam3\",\"details\":{\"from\"") }, as: UTF8.self)
        let event = try #require(received.split(whereSeparator: \.isNewline).first { $0.hasPrefix(line) && $0.contains("\"kind\":\"switch\"") && $0.contains("cam3") },
                                 "no switch event in \(received)")
        // The same JSON line as the control socket's `subscribe` sends.
        let json = try JSONValue(parsing: String(event.dropFirst("data: ".count)))
        #expect(json["event"]?["camera"] == "cam3" && json["event"]?["program_ms"]?.intValue != nil, "\(json)")

        // Many events with the slow client connected: every switch answers, the program goes on.
        let before = try studio.status()
        let framesBefore = try #require(before["program"]?["frames"]?.intValue)
        let lateBefore = try #require(before["program"]?["late_ticks"]?.intValue)
        for index in 0..<30 {
            let source = ["cam1", "cam2", "cam3"][index % 3]
            let response = try HTTPTestClient.fetch(port: port, "POST", "/api/v1/switch", body: Array("{\"source\":\"\(source)\"}".utf8))
            #expect(response.status == 200, "\(response)")
        }
        let status = try studio.status()
        #expect((status["program"]?["frames"]?.intValue ?? 0) > framesBefore + 20, "the program kept delivering frames")
        #expect(status["program"]?["source"] == "cam3")
        #expect(status["program"]?["late_ticks"]?.intValue == lateBefore, "no program tick came late meanwhile: \(status["program"] ?? .null)")
        let after = try HTTPTestClient.fetch(port: port, "GET", "/api/v1/status")
        #expect(after.status == 200)
    }

    @Test func aBusyPortStopsTheStartWithAClearMessage() throws {
        let studio = try StudioHarness()
        // Something else listens on the port.
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = NginxRTMP.loopbackAddress(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, length) == 0 && getsockname(holder, $0, &length) == 0 }
        }
        try #require(bound && listen(holder, 1) == 0)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let refused = try studio.run(["serve", "--cameras", "1", "--db", studio.database, "--socket", studio.socket, "--http", "127.0.0.1:\(port)"])
        #expect(refused.status != 0)
        #expect(refused.error.contains("cannot serve the HTTP API") && refused.error.contains("--no-http"), "\(refused.error)")
    }

    /// The mixer over HTTP: `GET /api/v1/audio` lists it as `studio audio --json` does; `POST
    /// /api/v1/audio/{input}` sets an input (or `master`), with the same errors as the socket's.
    @Test func theAudioMixerIsOnHTTP() throws {
        let studio = try StudioHarness()
        let port = try Self.serve(studio)
        let listed = try Self.json(HTTPTestClient.fetch(port: port, "GET", "/api/v1/audio"))
        #expect(listed["inputs"]?[0]?["name"] == "tone" && listed["master"]?["ceiling_dbfs"]?.doubleValue == -1, "\(listed)")
        #expect(Self.shape(listed) == Self.shape(try studio.json(["audio"])))
        let set = try HTTPTestClient.fetch(port: port, "POST", "/api/v1/audio/tone", body: Array(#"{"gain": -6, "mute": true, "pan": "mono"}"#.utf8))
        let changed = try Self.json(set)
        #expect(set.status == 200 && changed["changed"]?["changed"]?["gain"] == "0 -> -6" && changed["changed"]?["changed"]?["mute"] == "off -> on"
                && changed["inputs"]?[0]?["pan"] == "mono", "\(set)")
        let master = try Self.json(HTTPTestClient.fetch(port: port, "POST", "/api/v1/audio/master", body: Array(#"{"gain": "-inf"}"#.utf8)))
        #expect(master["master"]?["gain_db"] == .null && master["changed"]?["input"] == "master", "\(master)")
        let muteMaster = try HTTPTestClient.fetch(port: port, "POST", "/api/v1/audio/master", body: Array(#"{"mute": true}"#.utf8))
        #expect(muteMaster.status == 400 && muteMaster.text.contains("master takes gain and ceiling only"), "\(muteMaster)")
        let typo = try HTTPTestClient.fetch(port: port, "POST", "/api/v1/audio/tone", body: Array(#"{"follow": "cam9"}"#.utf8))
        #expect(typo.status == 400 && typo.text.contains("no camera or scene \\\"cam9\\\" to follow; they are cam1, cam2, cam3"), "\(typo)")
        let unknown = try HTTPTestClient.fetch(port: port, "POST", "/api/v1/audio/mic7", body: Array(#"{"gain": 0}"#.utf8))
        #expect(unknown.status == 404 && unknown.text.contains("the inputs are tone"), "\(unknown)")
        let loud = try HTTPTestClient.fetch(port: port, "POST", "/api/v1/audio/tone", body: Array(#"{"delay": -1}"#.utf8))
        #expect(loud.status == 400 && loud.text.contains("delay -1 ms is outside 0..1000 ms"), "\(loud)")
        #expect(studio.stopServer() == .exited(0))
    }
}
