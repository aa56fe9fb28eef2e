import CPipeWire
import StudioCore

/// One EnumFormat param of a PipeWire video source, read from its pod: a pixel format and the sizes and
/// rates offered with it (a list, or a range with a default).
public struct PipeWireVideoOffer: Sendable, Hashable {
    public enum Sizes: Sendable, Hashable {
        case list([Size])
        case range(default: Size, min: Size, max: Size)
    }
    public enum Rates: Sendable, Hashable {
        case list([Rational])
        case range(default: Rational, min: Rational, max: Rational)
    }
    public struct Size: Sendable, Hashable {
        public var width: Int
        public var height: Int
        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    /// The SPA video format id (`SPA_VIDEO_FORMAT_*`), or 0 for a compressed format.
    public var spaFormat: UInt32
    /// The format's name as PipeWire spells it (`NV12`, `YUY2`, `MJPG`...).
    public var name: String
    public var sizes: Sizes
    public var rates: Rates

    public init(spaFormat: UInt32, name: String, sizes: Sizes, rates: Rates) {
        self.spaFormat = spaFormat
        self.name = name
        self.sizes = sizes
        self.rates = rates
    }

    /// True for a compressed MJPEG offer (`spaFormat` 0, name `MJPG`).
    public var isMJPEG: Bool { spaFormat == 0 && name == "MJPG" }

    /// The pipeline's pixel format for this offer, nil when the capture path cannot take it as it is.
    public var pixelFormat: PixelFormat? { PipeWireVideoFormats.pixelFormat(spaFormat: spaFormat) }

    /// As `CameraMode`s for `studio cameras --json`: one per listed size (a size range shows its default).
    public var modes: [CameraMode] {
        let rateList: [Rational], rateRange: ClosedRange<Double>?
        switch rates {
        case .list(let list):
            rateList = list.sorted { $0.doubleValue > $1.doubleValue }
            rateRange = nil
        case let .range(_, min, max):
            rateList = []
            rateRange = min.doubleValue...Swift.max(min.doubleValue, max.doubleValue)
        }
        let sizeList: [Size]
        switch sizes {
        case .list(let list): sizeList = list
        case .range(let preferred, _, _): sizeList = [preferred]
        }
        return sizeList.map { CameraMode(format: name, width: $0.width, height: $0.height, frameRates: rateList, rateRange: rateRange) }
    }
}

/// Mapping between SPA video formats and the pipeline's pixel formats (the SPA columns of
/// `PixelFormat.table`), reading offers from pods, and choosing what to ask a source for.
public enum PipeWireVideoFormats {
    /// Every SPA format of the pixel-format table with the pipeline format it delivers, in table order.
    static let table: [(spa: UInt32, pixel: PixelFormat, name: String)] = PixelFormat.table.flatMap { row in
        row.pipeWire.map { ($0.spaID, row.format, $0.name) }
    }

    public static func pixelFormat(spaFormat: UInt32) -> PixelFormat? {
        table.first { $0.spa == spaFormat }?.pixel
    }

    /// The SPA format to ask for to receive `pixelFormat` (the row's first: BGRx for bgra, what cameras
    /// send); `SPA_VIDEO_FORMAT_UNKNOWN` (0) for a format no camera delivers (yuva420p, a player's).
    public static func spaFormat(for pixelFormat: PixelFormat) -> UInt32 {
        pixelFormat.row.pipeWire.first?.spaID ?? 0
    }

    public static func name(spaFormat: UInt32) -> String {
        table.first { $0.spa == spaFormat }?.name ?? "format-\(spaFormat)"
    }

    /// Reads a video EnumFormat (or Format) pod. Raw formats give one offer per listed pixel format;
    /// compressed ones one offer named after the subtype (`MJPG`, `H264`). Nil for anything else.
    static func offers(fromPod bytes: [UInt8]) -> [PipeWireVideoOffer] {
        bytes.withUnsafeBytes { raw -> [PipeWireVideoOffer] in
            guard raw.count >= MemoryLayout<spa_pod>.size else { return [] }
            let pod = raw.baseAddress!.assumingMemoryBound(to: spa_pod.self)
            guard cpw_pod_object_type(pod) == UInt32(SPA_TYPE_OBJECT_Format) else { return [] }
            var mediaType: UInt32 = 0, mediaSubtype: UInt32 = 0
            guard spa_format_parse(pod, &mediaType, &mediaSubtype) >= 0, mediaType == SPA_MEDIA_TYPE_video.rawValue else { return [] }
            let sizes = readSizes(pod), rates = readRates(pod)
            guard let sizes, let rates else { return [] }
            switch mediaSubtype {
            case SPA_MEDIA_SUBTYPE_raw.rawValue:
                var formats = [UInt32](repeating: 0, count: 64)
                var choice: UInt32 = 0
                let count = Int(cpw_pod_property_values(pod, SPA_FORMAT_VIDEO_format.rawValue, UInt32(SPA_TYPE_Id), 4, &formats, 64, &choice))
                guard count > 0 else { return [] }
                // An Enum's first value is its default, repeated among the alternatives.
                var list = choice == SPA_CHOICE_Enum.rawValue && count > 1 ? Array(formats[1..<count]) : Array(formats[0..<count])
                list = list.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
                return list.map { PipeWireVideoOffer(spaFormat: $0, name: name(spaFormat: $0), sizes: sizes, rates: rates) }
            case SPA_MEDIA_SUBTYPE_mjpg.rawValue:
                return [PipeWireVideoOffer(spaFormat: 0, name: "MJPG", sizes: sizes, rates: rates)]
            case SPA_MEDIA_SUBTYPE_h264.rawValue:
                return [PipeWireVideoOffer(spaFormat: 0, name: "H264", sizes: sizes, rates: rates)]
            default:
                return []
            }
        }
    }

    private static func readSizes(_ pod: UnsafePointer<spa_pod>) -> PipeWireVideoOffer.Sizes? {
        var values = [spa_rectangle](repeating: spa_rectangle(), count: 64)
        var choice: UInt32 = 0
        let count = Int(cpw_pod_property_values(pod, SPA_FORMAT_VIDEO_size.rawValue, UInt32(SPA_TYPE_Rectangle), 8, &values, 64, &choice))
        guard count > 0 else { return nil }
        let sizes = values[0..<count].map { PipeWireVideoOffer.Size(width: Int($0.width), height: Int($0.height)) }
        switch choice {
        case SPA_CHOICE_Range.rawValue where count >= 3, SPA_CHOICE_Step.rawValue where count >= 3:
            return .range(default: sizes[0], min: sizes[1], max: sizes[2])
        case SPA_CHOICE_Enum.rawValue where count > 1:
            return .list(Array(sizes[1...]).reduce(into: []) { if !$0.contains($1) { $0.append($1) } })
        default:
            return .list([sizes[0]])
        }
    }

    private static func readRates(_ pod: UnsafePointer<spa_pod>) -> PipeWireVideoOffer.Rates? {
        var values = [spa_fraction](repeating: spa_fraction(), count: 64)
        var choice: UInt32 = 0
        let count = Int(cpw_pod_property_values(pod, SPA_FORMAT_VIDEO_framerate.rawValue, UInt32(SPA_TYPE_Fraction), 8, &values, 64, &choice))
        // A source that states no rate (a variable-rate screen source): take it as "any".
        guard count > 0 else { return .range(default: Rational(30), min: Rational(0, 1), max: Rational(240)) }
        let rates = values[0..<count].map { Rational(Int32(clamping: $0.num), Int32(clamping: max($0.denom, 1))) }
        switch choice {
        case SPA_CHOICE_Range.rawValue where count >= 3, SPA_CHOICE_Step.rawValue where count >= 3:
            return .range(default: rates[0], min: rates[1], max: rates[2])
        case SPA_CHOICE_Enum.rawValue where count > 1:
            return .list(Array(rates[1...]).reduce(into: []) { if !$0.contains($1) { $0.append($1) } })
        default:
            return .list([rates[0]])
        }
    }

    /// What to ask a source for, given what it offers and what the program wants, by the one camera-mode
    /// policy (`ModeRanking`, shared with V4L2 cameras): raw offers of the table's formats and MJPEG
    /// offers (decoded to I420 by the camera, so the format says `i420`). Within a size range the wanted
    /// size itself (clamped, even) is considered. Nil when nothing offered is usable (H.264 only).
    public static func choose(from offers: [PipeWireVideoOffer], wanted: CameraFormat) -> CameraFormat? {
        select(from: offers, wanted: wanted)?.format
    }

    /// `choose`, plus what goes on the wire (BGRx and BGRA both become `bgra`; MJPEG is decoded to I420).
    public static func select(from offers: [PipeWireVideoOffer], wanted: CameraFormat) -> PipeWireVideoChoice? {
        var modes: [OfferedMode<UInt32>] = []
        for offer in offers {
            guard let published = offer.isMJPEG ? .i420 : offer.pixelFormat else { continue }
            let rates: OfferedRates
            switch offer.rates {
            case .list(let list):
                guard list.contains(where: { $0.numerator > 0 }) else { continue }
                rates = .list(list)
            case let .range(_, min, max):
                rates = .range(min: min, max: max)
            }
            let sizes: [PipeWireVideoOffer.Size]
            switch offer.sizes {
            case .list(let list): sizes = list
            case let .range(_, min, max):
                let width = Swift.min(Swift.max(wanted.width, min.width), max.width) & ~1
                let height = Swift.min(Swift.max(wanted.height, min.height), max.height) & ~1
                sizes = [PipeWireVideoOffer.Size(width: width, height: height)]
            }
            modes += sizes.map {
                OfferedMode(wire: offer.spaFormat, published: published, isCompressed: offer.isMJPEG,
                            width: $0.width, height: $0.height, rates: rates)
            }
        }
        guard let best = ModeRanking.ranked(modes, width: wanted.width, height: wanted.height, frameRate: wanted.frameRate).first,
              let rate = best.frameRate else { return nil }
        let format = CameraFormat(pixelFormat: best.mode.published, width: best.mode.width, height: best.mode.height, frameRate: rate)
        return PipeWireVideoChoice(format: format, spaFormat: best.mode.isCompressed ? 0 : best.mode.wire, isMJPEG: best.mode.isCompressed)
    }
}

/// What a PipeWire camera asks its node for.
public struct PipeWireVideoChoice: Sendable, Hashable {
    /// The frames the camera publishes (for MJPEG: I420 at the JPEG's size and rate).
    public var format: CameraFormat
    /// The SPA raw video format asked for; 0 for MJPEG.
    public var spaFormat: UInt32
    /// True when the node sends JPEG images that the camera decodes.
    public var isMJPEG: Bool
    /// The wire format's name as PipeWire spells it (`NV12`, `MJPG`...).
    public var wireName: String { isMJPEG ? "MJPG" : PipeWireVideoFormats.name(spaFormat: spaFormat) }
}

