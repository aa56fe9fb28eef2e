import Foundation
import Synchronization
import Testing
import StudioCore
import StudioSystem
@testable import TallyOut

/// What the node's clock client says of its round trips (a fake transport: samples made here), and how
/// it reads the switcher's answer.
@Suite struct SwitcherClockClientTests {
    final class Heard: Sendable {
        let said = Mutex<[(ClockOffsetStatus, Bool)]>([])
        func withLock<R>(_ body: (inout [(ClockOffsetStatus, Bool)]) -> R) -> R { said.withLock { body(&$0) } }
    }

    /// A client that is never started, and what it said.
    static func client() -> (SwitcherClockClient, Heard) {
        let heard = Heard()
        let client = SwitcherClockClient(address: ListenAddress(host: "127.0.0.1", port: 9), token: nil, clock: .system, log: { _ in }) { status, first in
            heard.withLock { $0.append((status, first)) }
        }
        return (client, heard)
    }

    /// A round trip of `rtt` µs, symmetric, with the node's clock `offset` µs behind the switcher's.
    static func sample(at: Int64, offset: Int64, rtt: Int64) -> ClockSample {
        ClockSample(sent: at, server: at + rtt / 2 + offset, received: at + rtt)
    }

    @Test func saysTheFirstEstimateAndOnlyMovesPastTheThreshold() {
        let (client, heard) = Self.client()
        #expect(client.status == .unmeasured)
        client.take(.success(Self.sample(at: 0, offset: -3_000_000, rtt: 2_000)))
        #expect(heard.withLock { $0.map(\.1) } == [true])
        #expect(client.offsetMicroseconds == -3_000_000)
        // A quicker round trip 2 ms away: the estimate follows it, but it is not said (under 5 ms).
        client.take(.success(Self.sample(at: 1_000_000, offset: -2_998_000, rtt: 1_000)))
        #expect(client.offsetMicroseconds == -2_998_000)
        #expect(heard.withLock { $0.count } == 1)
        // A failure keeps the estimate.
        client.take(.failure(TallyFollowError("cannot connect")))
        #expect(client.status.measured && client.status.offsetMilliseconds == -2998)
        // Quicker still and 10 ms from what was said: said, not as the first.
        client.take(.success(Self.sample(at: 2_000_000, offset: -2_988_000, rtt: 500)))
        #expect(heard.withLock { $0.map { ($0.0.offsetMilliseconds ?? 0, $0.1) } }.last.map { $0 == (-2988, false) } == true,
                "\(heard.withLock { $0 })")
    }

    @Test func readsTheSwitchersAnswerOnceItsBodyIsWhole() throws {
        let body = "{\"wall_time_us\": 1765000000123456}\n"
        let bytes = Array("HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        // Whole once its Content-Length of body has come (the close is not waited for).
        #expect(try HTTPExchange.whole(Array(bytes.dropLast(3))) == nil)
        let answer = try #require(try HTTPExchange.whole(bytes + Array("trailing".utf8)))
        #expect(answer.status == 200 && answer.body == Array(body.utf8))
        #expect(try SwitcherClockClient.serverTime(answer) == 1_765_000_000_123_456)
        func parsed(_ text: String) throws -> HTTPExchange.Answer { try #require(try HTTPExchange.whole(Array(text.utf8))) }
        #expect(throws: TallyFollowError.self) { try SwitcherClockClient.serverTime(try parsed("HTTP/1.0 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")) }
        #expect(throws: TallyFollowError.self) { try SwitcherClockClient.serverTime(try parsed("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n{}\n")) }
    }
}
