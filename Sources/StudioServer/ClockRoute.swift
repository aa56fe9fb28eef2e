import StudioSystem
import HTTPConsole
import TallyOut

/// `GET /api/v1/clock`: this server's wall clock, `{"wall_time_us": N}` (µs since 1970), which capture
/// nodes ask several times every few seconds to measure their clock against it (`SwitcherClockClient`).
/// Answered at once on the HTTP thread, with nothing else in the answer: the round trip is the measure's
/// error. Not a control command: a clock read over the socket would measure nothing.
enum ClockRoute {
    static let route = HTTPRoute(.get, SwitcherClockClient.path, name: "clock")
    static let all = [route]

    static func answer(_ call: HTTPCall, clock: WallClock = .system) -> HTTPResponse? {
        guard call.route == route else { return nil }
        return .json(200, "{\"wall_time_us\": \(clock.now())}")
    }
}
