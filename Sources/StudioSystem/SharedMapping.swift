import CSystem
#if canImport(Glibc)
import Glibc
#endif

/// A second, read-only mapping of shared memory this process already maps (the same pages, not a
/// copy), with a lifetime of its own: it stays readable after the first mapping is unmapped, until this
/// object goes. For reading in place memory another library maps and may unmap at its own time (a
/// PipeWire stream's buffers).
public final class SharedMappingView: Sendable {
    /// The address of the first mapping's `start` in this one.
    public let address: UInt
    public let size: Int
    private let base: UInt
    private let length: Int

    /// Maps again the `size` bytes at `start`; nil when they are not in a shared mapping (a private one,
    /// the heap) or the mapping fails.
    public init?(of start: UnsafeRawPointer, size: Int) {
        guard size > 0 else { return nil }
        let page = UInt(max(sysconf(Int32(_SC_PAGESIZE)), 1))
        let first = UInt(bitPattern: start), aligned = first - first % page
        let length = Int(first - aligned) + size
        guard let from = UnsafeMutableRawPointer(bitPattern: aligned),
              let view = csys_duplicate_shared_mapping(from, length) else { return nil }
        base = UInt(bitPattern: view)
        self.length = length
        address = base + (first - aligned)
        self.size = size
    }

    deinit { munmap(UnsafeMutableRawPointer(bitPattern: base), length) }
}
