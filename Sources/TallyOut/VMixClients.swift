#if canImport(Glibc)
import Glibc
#endif

/// The vMix server's connections (its thread only): each client's socket, what it sent that is not a
/// whole line yet, what it has not taken yet, and whether it subscribed to the tally.
struct VMixClients {
    struct Client {
        let fd: Int32
        var input: [UInt8] = []
        var output: ArraySlice<UInt8> = []
        var subscribed = false
    }

    private var clients: [Int: Client] = [:]
    private var nextID = 0
    private var dropped: Int64 = 0

    var ids: [Int] { clients.keys.sorted() }
    var count: Int { clients.count }
    func contains(_ id: Int) -> Bool { clients[id] != nil }

    subscript(id: Int) -> Client {
        get { clients[id]! }
        set { clients[id] = newValue }
    }

    mutating func add(_ fd: Int32) {
        nextID += 1
        clients[nextID] = Client(fd: fd)
    }

    /// A reply line, CRLF added.
    mutating func queue(_ line: String, to id: Int) { queue(bytes: Array((line + "\r\n").utf8), to: id) }

    /// Bytes for `id` (gone clients are skipped); a client holding more than the limit unsent is dropped.
    mutating func queue(bytes: [UInt8], to id: Int) {
        guard clients[id] != nil else { return }
        clients[id]!.output += bytes
        if clients[id]!.output.count > VMixServer.outputLimit { drop(id) }
    }

    /// Writes what each socket takes now; a failed one is closed.
    mutating func flush() {
        for id in ids where !(clients[id]?.output.isEmpty ?? true) {
            guard let client = clients[id] else { continue }
            do { clients[id]!.output = try TallySockets.write(client.output, to: client.fd) } catch { remove(id) }
        }
    }

    /// Closes a client that went away.
    mutating func remove(_ id: Int) {
        guard let client = clients.removeValue(forKey: id) else { return }
        close(client.fd)
    }

    /// Closes a client that misbehaved, counted.
    mutating func drop(_ id: Int) {
        guard clients[id] != nil else { return }
        remove(id)
        dropped += 1
    }

    /// The drops since the last call.
    mutating func takeDropped() -> Int64 {
        defer { dropped = 0 }
        return dropped
    }

    mutating func closeAll() { for id in ids { remove(id) } }
}
