import Foundation
import StudioSystem
import Testing
@testable import Control
#if canImport(Glibc)
import Glibc
#endif

/// The client's decision whether to trust a control socket, from owners and modes alone (no second
/// user needed), and the server's handling of its directory with a socket group.
@Suite struct SocketOwnershipTests {
    typealias Owner = SocketOwnership.FileOwner
    let me = SocketOwnership.Caller(uid: 1000, groups: [1000, 27])
    let privateDirectory = Owner(uid: 1000, gid: 1000, mode: 0o040700)
    let mySocket = Owner(uid: 1000, gid: 1000, mode: 0o140600)

    func refusal(_ directory: Owner, _ socket: Owner?, groupAllowed: Bool = true) -> String? {
        SocketOwnership.refusal(directory: "/d", directory, socket: "/d/s.sock", socket, caller: me, groupAllowed: groupAllowed)
    }

    @Test func ownOrRootIsTrusted() {
        #expect(refusal(privateDirectory, mySocket) == nil)
        #expect(refusal(privateDirectory, nil) == nil, "nothing there yet: connecting says no server")
        #expect(refusal(Owner(uid: 0, gid: 0, mode: 0o040755), Owner(uid: 0, gid: 0, mode: 0o140600)) == nil)
        // /tmp itself: everyone writes, but the sticky bit keeps others from replacing our socket.
        #expect(refusal(Owner(uid: 0, gid: 0, mode: 0o041777), mySocket) == nil)
    }

    @Test func anotherUsersDirectoryOrSocketIsRefusedNamingTheOwner() throws {
        let planted = try #require(refusal(Owner(uid: 4242, gid: 4242, mode: 0o040755), Owner(uid: 4242, gid: 4242, mode: 0o140777)))
        #expect(planted.contains("/d belongs to uid 4242") && planted.contains("not to you"), "\(planted)")
        let socket = try #require(refusal(privateDirectory, Owner(uid: 4242, gid: 4242, mode: 0o140777)))
        #expect(socket.contains("/d/s.sock belongs to uid 4242"), "\(socket)")
        let open = try #require(refusal(Owner(uid: 1000, gid: 1000, mode: 0o040777), mySocket))
        #expect(open.contains("writable by every user") && open.contains("0777"), "\(open)")
    }

    @Test func aServiceUsersSocketIsTrustedThroughAGroupOfOurs() throws {
        let serviceDirectory = Owner(uid: 998, gid: 27, mode: 0o040750)
        let serviceSocket = Owner(uid: 998, gid: 27, mode: 0o140660)
        #expect(refusal(serviceDirectory, serviceSocket) == nil)
        // Not under the private default path, not a group of ours, not opened to the group: refused.
        #expect(refusal(serviceDirectory, serviceSocket, groupAllowed: false) != nil)
        let otherGroup = try #require(refusal(Owner(uid: 998, gid: 50, mode: 0o040750), serviceSocket))
        #expect(otherGroup.contains("not opened to a group of yours (group gid 50)") || otherGroup.contains("(gid 50)"), "\(otherGroup)")
        #expect(refusal(serviceDirectory, Owner(uid: 998, gid: 27, mode: 0o140640)) != nil, "the group may not write the socket")
        #expect(refusal(Owner(uid: 998, gid: 27, mode: 0o040740), serviceSocket) != nil, "the group may not enter the directory")
    }

    /// On real files (root may chown to any uid; no second user needed): a directory of uid 4242
    /// is refused before connecting, and a group of the caller opens a shared directory but never
    /// the caller's private default `/tmp/studio-<uid>`.
    @Test func theClientChecksTheRealFilesBeforeConnecting() throws {
        try #require(geteuid() == 0, "chown to another uid needs root")
        let directory = SocketDirectory()
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter())
        try server.start()
        defer { server.stop() }
        #expect(SocketOwnership.check(socketPath: directory.socketPath) == nil)
        // A directory reached through a symbolic link (mode 0777 itself) is judged by what it points to.
        let link = "/tmp/studio-control-tests/link-" + directory.path.suffix(8)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory.path)
        defer { try? FileManager.default.removeItem(atPath: link) }
        #expect(SocketOwnership.check(socketPath: link + "/control.sock") == nil)
        try syscall("chown") { chown(directory.path, 4242, 4242) }
        do {
            _ = try ControlClient(socketPath: directory.socketPath)
            Issue.record("expected untrusted_socket")
        } catch {
            #expect(error.code == .untrustedSocket && error.message.contains("belongs to") && error.message.contains("4242"), "\(error)")
        }

        let member = SocketOwnership.Caller(uid: 4243, groups: [4242])
        let shared = directory.path + "/shared"
        let privateDefault = "/tmp/studio-4243"
        try? FileManager.default.removeItem(atPath: privateDefault)
        defer { try? FileManager.default.removeItem(atPath: privateDefault) }
        for path in [shared, privateDefault] {
            try syscall("mkdir") { mkdir(path, 0o750) }
            // The mode exactly, whatever the process umask is just now (tests that start a server in
            // this process set it: it is process-wide).
            try syscall("chmod") { chmod(path, 0o750) }
            try syscall("chown") { chown(path, 4242, 4242) }
        }
        #expect(SocketOwnership.check(socketPath: shared + "/s.sock", caller: member) == nil)
        let refused = try #require(SocketOwnership.check(socketPath: privateDefault + "/studio.sock", caller: member))
        #expect(refused.contains("/tmp/studio-4243 belongs to"), "\(refused)")
    }

    /// `--socket-group` after a start that left the directory 0700 (a first start without the group, or
    /// one that failed): the server opens its own private directory to the group.
    @Test func aPrivateDirectoryOfOursIsOpenedToTheSocketGroup() throws {
        let operators = try #require(getgrnam("nogroup")?.pointee.gr_gid, "Debian has a nogroup group")
        let directory = SocketDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter(), group: operators)
        try server.start()
        defer { server.stop() }
        var info = stat()
        try syscall("stat") { stat(directory.path, &info) }
        #expect(info.st_mode & 0o777 == 0o750 && info.st_gid == operators)
    }

    /// A directory that keeps the group out and is not a private one of ours is left alone, and the
    /// error says what to run.
    @Test func aDirectoryClosedToTheGroupIsReportedWithTheFix() throws {
        let operators = try #require(getgrnam("nogroup")?.pointee.gr_gid, "Debian has a nogroup group")
        let directory = SocketDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        try syscall("chmod") { chmod(directory.path, 0o740) }
        let server = ControlServer(socketPath: directory.socketPath, handler: makeTestRouter(), group: operators)
        do {
            try server.start()
            server.stop()
            Issue.record("expected groupCannotReach")
        } catch {
            #expect(error == .groupCannotReach(path: directory.socketPath, directory: directory.path, group: operators))
            #expect(error.description.contains("chgrp nogroup \(directory.path) && chmod g+x \(directory.path)"), "\(error)")
        }
        var info = stat()
        try syscall("stat") { stat(directory.path, &info) }
        #expect(info.st_mode & 0o777 == 0o740, "left as it was")
    }
}
