/// Row kernels of full-range (JPEG) YUV to limited range, for `MediaSupport`'s `JPEGRangeConversion`,
/// in 16-byte vectors with a scalar tail.
///
/// Why a module of its own: its target is compiled optimised in every build (`-O`, Package.swift).
/// Swift's SIMD types are generic and, unoptimised, each lane operation is a call: in a debug build a
/// 1280x720 MJPEG camera managed 3 pictures in a minute, and the end-to-end tests with such cameras failed.
public enum FullRangeRows {
    /// `x / 255` for `x` below 65535, without a division.
    @inline(__always) public static func divideBy255(_ x: SIMD16<UInt16>) -> SIMD16<UInt16> { (x &+ 1 &+ (x &>> 8)) &>> 8 }
    @inline(__always) public static func divideBy255(_ x: UInt16) -> UInt16 { (x &+ 1 &+ (x &>> 8)) &>> 8 }

    /// Full-range luma to limited: `16 + round(y * 219 / 255)`.
    public static func luma(_ y: UInt8) -> UInt8 { UInt8(16 &+ divideBy255(UInt16(y) &* 219 &+ 127)) }
    /// Full-range chroma (the mean of `a` and `b`, rounded up) to limited: `round((c * 224 + 128 * 31) / 255)`.
    public static func chroma(_ a: UInt8, _ b: UInt8) -> UInt8 {
        let mean = (UInt16(a) &+ UInt16(b) &+ 1) &>> 1
        return UInt8(divideBy255(mean &* 224 &+ 3968 &+ 127))
    }

    /// Converts `count` luma samples.
    public static func luma(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>, count: Int) {
        var x = 0
        let raw = UnsafeRawPointer(source), out = UnsafeMutableRawPointer(destination)
        while x + 16 <= count {
            let y = SIMD16<UInt16>(truncatingIfNeeded: raw.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self))
            let limited = divideBy255(y &* 219 &+ 127) &+ 16
            out.storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: limited), toByteOffset: x, as: SIMD16<UInt8>.self)
            x += 16
        }
        while x < count {
            destination[x] = luma(source[x])
            x += 1
        }
    }

    /// Converts `count` chroma samples: the rounded-up mean of `first` and `second` (the same row twice
    /// for 4:2:0), to limited range.
    public static func chroma(_ first: UnsafePointer<UInt8>, _ second: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>,
                                  count: Int) {
        var x = 0
        let a = UnsafeRawPointer(first), b = UnsafeRawPointer(second), out = UnsafeMutableRawPointer(destination)
        while x + 16 <= count {
            let one = SIMD16<UInt16>(truncatingIfNeeded: a.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self))
            let two = SIMD16<UInt16>(truncatingIfNeeded: b.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self))
            let mean = (one &+ two &+ 1) &>> 1
            let limited = divideBy255(mean &* 224 &+ (3968 + 127))
            out.storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: limited), toByteOffset: x, as: SIMD16<UInt8>.self)
            x += 16
        }
        while x < count {
            destination[x] = chroma(first[x], second[x])
            x += 1
        }
    }
}
