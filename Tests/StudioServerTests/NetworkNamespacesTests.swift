import Foundation
import Testing
import TestSupport

/// The namespace rig (TestSupport's `NetworkNamespaces`) the node end-to-end tests stand on: TCP and UDP
/// cross a veth pair between two namespaces on their loopback-style addresses (the peer seen as the
/// other end's address: the veth, not a `lo`), a third namespace with no link reaches nothing, and the
/// rig's namespaces are gone once it is removed or released.
@Suite(.serialized) struct NetworkNamespacesTests {
    /// Why these tests skip, or nil.
    static let unavailable = NetworkNamespaces.unavailableReason
    static let skipped = Comment(rawValue: "needs root and `ip netns` (network namespaces): \(unavailable ?? "")")

    /// python3: serves one TCP connection and one UDP datagram on ADDRESS:PORT, answering each with the
    /// peer's address; or as the client, calls (again, for 20 s) and prints both answers.
    static let echo = """
        import socket, sys, time
        role, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
        if role == "serve":
            t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); t.bind((host, port)); t.listen()
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((host, port))
            c, peer = t.accept(); c.sendall(("tcp from " + peer[0]).encode()); c.close()
            data, peer = u.recvfrom(100); u.sendto(("udp from " + peer[0]).encode(), peer)
        else:
            deadline = time.time() + float(sys.argv[4])
            while True:
                try:
                    c = socket.create_connection((host, port), timeout=1); print(c.recv(100).decode()); break
                except OSError as error:
                    if time.time() > deadline: print("tcp: " + str(error)); sys.exit(1)
                    time.sleep(0.1)
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(0.2)
            while True:
                u.sendto(b"hello", (host, port))
                try:
                    print(u.recvfrom(100)[0].decode()); break
                except OSError as error:
                    if time.time() > deadline: print("udp: " + str(error)); sys.exit(1)
        """

    @Test(.enabled(if: unavailable == nil, skipped))
    func tcpAndUDPCrossAVethPairAndNothingElse() throws {
        let rig = try NetworkNamespaces()
        let (a, b, c) = (try rig.add("a"), try rig.add("b"), try rig.add("c"))
        let link = try rig.link(a, b)
        #expect(link.address(in: a) == "127.1.1.1" && link.address(in: b) == "127.1.1.2")
        #expect([a, b, c].allSatisfy { NetworkNamespaces.exists($0.name) && $0.name.hasPrefix(rig.prefix) })

        let server = try rig.spawn(in: b, "/usr/bin/python3", ["-c", Self.echo, "serve", link.address(in: b), "7000"])
        let client = try rig.spawn(in: a, "/usr/bin/python3", ["-c", Self.echo, "call", link.address(in: b), "7000", "20"])
        #expect(client.wait(timeout: 40) == .exited(0), "client: \(client.outputText()) \(client.errorText())")
        #expect(server.wait(timeout: 10) == .exited(0), "server: \(server.errorText())")
        #expect(client.outputText() == "tcp from \(link.address(in: a))\nudp from \(link.address(in: a))\n", "\(client.outputText())")

        // c has no link: b's address is nobody there (its own lo answers for 127/8, and nothing listens).
        let server2 = try rig.spawn(in: b, "/usr/bin/python3", ["-c", Self.echo, "serve", link.address(in: b), "7001"])
        let stranger = try rig.spawn(in: c, "/usr/bin/python3", ["-c", Self.echo, "call", link.address(in: b), "7001", "1"])
        #expect(stranger.wait(timeout: 20) == .exited(1) && stranger.outputText().hasPrefix("tcp: "), "\(stranger.outputText())")
        server2.stop(grace: 1)

        rig.remove()
        #expect([a, b, c].allSatisfy { !NetworkNamespaces.exists($0.name) }, "left behind: \([a, b, c].filter { NetworkNamespaces.exists($0.name) })")
    }

    @Test(.enabled(if: unavailable == nil, skipped))
    func aReleasedRigRemovesItsNamespacesOnlyItsOwn() throws {
        let other = try NetworkNamespaces()
        let kept = try other.add("kept")
        var names: [String] = []
        do {
            let rig = try NetworkNamespaces()
            names = [try rig.add("x").name, try rig.add("y").name]
            #expect(names.allSatisfy(NetworkNamespaces.exists))
            #expect(rig.prefix != other.prefix)
        }
        #expect(names.allSatisfy { !NetworkNamespaces.exists($0) }, "\(names)")
        #expect(NetworkNamespaces.exists(kept.name), "another rig's namespace went too")
        other.remove()
        #expect(!NetworkNamespaces.exists(kept.name))
    }
}
