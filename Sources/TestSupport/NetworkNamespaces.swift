import Foundation
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// Network namespaces for tests that put each `studio` in a machine of its own (issue 32: a capture node
/// on its own PC): `ip netns` namespaces named uniquely per rig (the process id and a random part, so
/// parallel test runs never meet), joined by veth pairs with loopback-style addresses (`127.1.N.1/30`
/// and `127.1.N.2/30` for the Nth link), each with its own `lo` up. Loopback addresses on a veth work
/// once the namespace sets `net.ipv4.conf.all.route_localnet` (the kernel ORs it with each interface's
/// own), which `add` does; without it the kernel refuses them off `lo` (connect: EINVAL). Processes run inside one through `ip netns exec` (which execs the command: the
/// child's PID is the command's). Needs root; `unavailableReason` says why not.
///
/// `remove()` (and `deinit`) deletes this rig's namespaces by name and nothing else; a namespace lives
/// on, unnamed, until the last process in it ends (its veths with it).
///
/// `@unchecked Sendable`: mutable state (`namespaces`, `links`, `removed`) is guarded by `lock`.
public final class NetworkNamespaces: @unchecked Sendable {
    /// A namespace of this rig: `name` as `ip netns` knows it, `label` as the test calls it.
    public struct Namespace: Sendable, Hashable, CustomStringConvertible {
        public let name: String
        public let label: String
        public var description: String { "\(label) (netns \(name))" }

        /// The command line that runs `executable` with `arguments` inside this namespace.
        public func command(_ executable: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
            (NetworkNamespaces.ip, ["netns", "exec", name, executable] + arguments)
        }
    }

    /// A veth pair: `address(in:)` gives each end's address (no prefix length).
    public struct Link: Sendable, Hashable {
        public let a: Namespace, b: Namespace
        public let addressA: String, addressB: String

        /// The address of the end of this link in `namespace` (the address the other end reaches it on).
        public func address(in namespace: Namespace) -> String {
            precondition(namespace == a || namespace == b, "\(namespace) is not on the link \(a.label)-\(b.label)")
            return namespace == a ? addressA : addressB
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    static let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "ip"

    /// Why namespaces cannot be made here (checked once by making a probe rig of two linked namespaces
    /// and removing it), or nil when they can.
    public static let unavailableReason: String? = {
        guard getuid() == 0 else { return "not root: `ip netns add` needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN)" }
        guard FileManager.default.isExecutableFile(atPath: ip) else { return "no `ip` command (Debian package iproute2)" }
        do {
            let probe = try NetworkNamespaces()
            defer { probe.remove() }
            _ = try probe.link(try probe.add("probe-a"), try probe.add("probe-b"))
            return nil
        } catch {
            return "\(error)"
        }
    }()

    /// Every namespace name of this rig starts with it: `studio-PID-RANDOM-`.
    public let prefix: String
    private let scratch: URL
    private let lock = ConditionLock()
    private var namespaces: [Namespace] = []
    private var links = 0
    private var removed = false

    public init() throws {
        prefix = "studio-\(getpid())-\(UUID().uuidString.prefix(6).lowercased())-"
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent(String(prefix.dropLast()))
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    deinit { remove() }

    /// The namespaces made so far, in order.
    public var all: [Namespace] { lock.withLock { namespaces } }

    /// Makes a namespace called `label` in the test (letters, digits and `-`, at most 12: its veths are
    /// named `to-LABEL`), with `lo` up and `route_localnet` on.
    public func add(_ label: String) throws -> Namespace {
        guard !label.isEmpty, label.count <= 12, label.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw Failure("namespace label \"\(label)\": letters, digits and -, at most 12")
        }
        let namespace = Namespace(name: prefix + label, label: label)
        try lock.withLock {
            guard !removed else { throw Failure("the rig \(prefix)* was removed") }
            guard !namespaces.contains(where: { $0.label == label }) else { throw Failure("namespace \(label) twice") }
            try run(["netns", "add", namespace.name])
            namespaces.append(namespace)
        }
        try run(["-n", namespace.name, "link", "set", "lo", "up"])
        try run(["netns", "exec", namespace.name, "sysctl", "-q", "-w", "net.ipv4.conf.all.route_localnet=1"])
        return namespace
    }

    /// A veth pair between `a` and `b` (interfaces `to-B` in `a`, `to-A` in `b`), `127.1.N.1/30` in `a` and
    /// `127.1.N.2/30` in `b` for this rig's Nth link, both up.
    public func link(_ a: Namespace, _ b: Namespace) throws -> Link {
        let number = try lock.withLock {
            guard !removed else { throw Failure("the rig \(prefix)* was removed") }
            guard namespaces.contains(a), namespaces.contains(b), a != b else { throw Failure("link \(a) to \(b): not two namespaces of this rig") }
            guard links < 255 else { throw Failure("more than 255 links") }
            links += 1
            return links
        }
        let link = Link(a: a, b: b, addressA: "127.1.\(number).1", addressB: "127.1.\(number).2")
        let (inA, inB) = ("to-\(b.label)", "to-\(a.label)")
        try run(["link", "add", inA, "netns", a.name, "type", "veth", "peer", "name", inB, "netns", b.name])
        for (namespace, interface, address) in [(a, inA, link.addressA), (b, inB, link.addressB)] {
            try run(["-n", namespace.name, "addr", "add", "\(address)/30", "dev", interface])
            try run(["-n", namespace.name, "link", "set", interface, "up"])
        }
        return link
    }

    /// Starts `executable` with `arguments` inside `namespace` (a `ChildProcess`, ended by its PID).
    public func spawn(in namespace: Namespace, _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
                      outputDirectory: URL? = nil) throws -> ChildProcess {
        let (launcher, launched) = namespace.command(executable, arguments)
        return try ChildProcess(executable: launcher, arguments: launched, environment: environment,
                                outputDirectory: outputDirectory ?? scratch.appendingPathComponent("child-\(UUID().uuidString.prefix(6))"))
    }

    /// Whether `ip netns` lists `name`.
    public static func exists(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: "/run/netns/\(name)")
    }

    /// Deletes this rig's namespaces (by name; only its own) and its scratch directory. Safe to call twice.
    public func remove() {
        let names = lock.withLock { () -> [String] in
            defer { removed = true; namespaces = [] }
            return removed ? [] : namespaces.map(\.name)
        }
        for name in names.reversed() { try? run(["netns", "del", name]) }
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Runs `ip ARGUMENTS` to completion (10 s at most); throws with its words when it fails.
    private func run(_ arguments: [String]) throws {
        let child = try ChildProcess(executable: Self.ip, arguments: arguments,
                                     outputDirectory: scratch.appendingPathComponent("ip-\(UUID().uuidString.prefix(6))"))
        defer { try? FileManager.default.removeItem(at: child.standardOutput.deletingLastPathComponent()) }
        let exit = child.wait(timeout: 10)
        guard exit == .exited(0) else {
            if exit == nil { child.stop(grace: 1) }
            let said = child.errorText().trimmingCharacters(in: .whitespacesAndNewlines)
            throw Failure("ip \(arguments.joined(separator: " ")): \(exit.map { "\($0)" } ?? "did not finish in 10 s")\(said.isEmpty ? "" : ": \(said)")")
        }
    }
}
