import Testing
import StudioSystem
#if canImport(Glibc)
import Glibc
#endif

/// `SharedMappingView`: the same pages as the first mapping (not a copy), read-only, and still there
/// after the first mapping is gone; nothing for memory that is not shared.
@Suite struct SharedMappingTests {
    /// A shared mapping of a fresh tmpfs file of `size` bytes (as PipeWire maps its memfd buffers).
    private func sharedMemory(size: Int) throws -> (fd: Int32, memory: UnsafeMutableRawPointer) {
        var template = Array("/dev/shm/studio-mapping-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        unlink(template)
        try #require(ftruncate(fd, off_t(size)) == 0)
        let memory = try #require(mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0))
        try #require(memory != UnsafeMutableRawPointer(bitPattern: -1))
        return (fd, memory)
    }

    @Test func aViewShowsTheSamePagesAndOutlivesTheFirstMapping() throws {
        let size = 3 * 4096 + 100
        let (fd, memory) = try sharedMemory(size: size)
        defer { close(fd) }
        let bytes = memory.assumingMemoryBound(to: UInt8.self)
        for index in 0..<size { bytes[index] = UInt8(truncatingIfNeeded: index * 7) }
        // From an address inside a page, as a buffer's data can start.
        let view = try #require(SharedMappingView(of: memory + 5000, size: size - 5000))
        let seen = try #require(UnsafePointer<UInt8>(bitPattern: view.address))
        #expect(view.size == size - 5000)
        #expect((0..<(size - 5000)).allSatisfy { seen[$0] == UInt8(truncatingIfNeeded: ($0 + 5000) * 7) })
        // The same pages: a write through the first mapping shows.
        bytes[6000] = 0xAB
        #expect(seen[1000] == 0xAB)
        munmap(memory, size)
        #expect(seen[1000] == 0xAB && seen[size - 5001] == UInt8(truncatingIfNeeded: (size - 1) * 7), "still mapped after the first mapping went")
    }

    @Test func privateMemoryHasNoView() {
        let heap = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { heap.deallocate() }
        #expect(SharedMappingView(of: heap, size: 1 << 20) == nil)
        #expect(SharedMappingView(of: heap, size: 0) == nil)
    }
}
