import CPipeWire
import CV4L2
import Testing
import Capture
import StudioCore

/// One mode policy for both camera backends: the same offered modes, described once and handed to
/// `V4L2ModeChoice` and to `PipeWireVideoFormats`, give the same choice.
@Suite struct ModeRankingTests {
    /// A camera mode described once: a raw pixel format or MJPEG (nil), a size, its rates.
    struct Mode {
        var format: PixelFormat?
        var width: Int
        var height: Int
        var rates: [Rational]
    }

    static func v4l2(_ modes: [Mode]) -> [V4L2Mode] {
        modes.map { V4L2Mode(fourcc: $0.format.map { FourCC($0.row.v4l2FourCCs[0])! } ?? .mjpeg, width: $0.width, height: $0.height,
                             rates: .discrete($0.rates.sorted { $0.doubleValue > $1.doubleValue })) }
    }

    static func pipeWire(_ modes: [Mode]) -> [PipeWireVideoOffer] {
        modes.map {
            PipeWireVideoOffer(spaFormat: $0.format.map(PipeWireVideoFormats.spaFormat(for:)) ?? 0, name: $0.format.map { $0.row.pipeWire[0].name } ?? "MJPG",
                               sizes: .list([.init(width: $0.width, height: $0.height)]), rates: .list($0.rates))
        }
    }

    /// The choice through both backends, as (published format, JPEG?, width, height, rate); fails the test when they differ.
    static func choice(_ modes: [Mode], for program: ProgramFormat) -> (PixelFormat, Bool, Int, Int, Rational)? {
        let byV4L2 = V4L2ModeChoice.best(v4l2(modes), for: program).map {
            ($0.fourcc.publishedFormat!, $0.fourcc.isCompressed, $0.width, $0.height, $0.frameRate!)
        }
        let wanted = CameraFormat(pixelFormat: .i420, width: program.width, height: program.height, frameRate: program.frameRate)
        let byPipeWire = PipeWireVideoFormats.select(from: pipeWire(modes), wanted: wanted).map {
            ($0.format.pixelFormat, $0.isMJPEG, $0.format.width, $0.format.height, $0.format.frameRate)
        }
        #expect(byV4L2.map { "\($0)" } == byPipeWire.map { "\($0)" }, "V4L2 and PipeWire choose differently for \(program)")
        return byV4L2
    }

    /// A typical USB webcam: raw YUYV only up to VGA at full rate, MJPEG up to 1080p.
    static let webcam = [
        Mode(format: .yuyv, width: 640, height: 480, rates: [Rational(30), Rational(15)]),
        Mode(format: .yuyv, width: 1280, height: 720, rates: [Rational(10), Rational(5)]),
        Mode(format: nil, width: 1280, height: 720, rates: [Rational(30), Rational(15)]),
        Mode(format: nil, width: 1920, height: 1080, rates: [Rational(30), Rational(15)]),
    ]

    @Test func aWebcamGetsTheSameModeThroughBothBackends() throws {
        // 720p: the JPEG mode at the program size and rate beats raw VGA (3x smaller) and raw 720p (10 fps).
        let at720 = try #require(Self.choice(Self.webcam, for: ProgramFormat(width: 1280, height: 720, frameRate: Rational(30))))
        #expect(at720 == (.i420, true, 1280, 720, Rational(30)))
        // 1080p: likewise the JPEG mode at the program size.
        let at1080 = try #require(Self.choice(Self.webcam, for: ProgramFormat(width: 1920, height: 1080, frameRate: Rational(30))))
        #expect(at1080 == (.i420, true, 1920, 1080, Rational(30)))
        // The exact raw size at a lower program rate.
        let at640 = try #require(Self.choice(Self.webcam, for: ProgramFormat(width: 640, height: 480, frameRate: Rational(15))))
        #expect(at640 == (.yuyv, false, 640, 480, Rational(15)))
    }

    @Test func formatPreferenceFollowsThePixelFormatTable() throws {
        let sizes = [Mode(format: .bgra, width: 1280, height: 720, rates: [Rational(30)]),
                     Mode(format: .yuyv, width: 1280, height: 720, rates: [Rational(30)]),
                     Mode(format: .nv12, width: 1280, height: 720, rates: [Rational(30)]),
                     Mode(format: .i420, width: 1280, height: 720, rates: [Rational(30)]),
                     Mode(format: nil, width: 1280, height: 720, rates: [Rational(30)])]
        for count in 1...sizes.count {
            let offered = Array(sizes.suffix(count))
            let chosen = try #require(Self.choice(offered, for: .default))
            let expected = offered.compactMap(\.format).min { $0.preferenceRank < $1.preferenceRank }
            #expect(chosen.0 == expected ?? .i420 && chosen.1 == (expected == nil))
        }
    }

    @Test func sizeAndRateComeBeforeFormat() throws {
        let modes = [Mode(format: .nv12, width: 640, height: 480, rates: [Rational(30), Rational(15)]),
                     Mode(format: .nv12, width: 320, height: 240, rates: [Rational(30)]),
                     Mode(format: .yuyv, width: 1280, height: 720, rates: [Rational(24), Rational(60)]),
                     Mode(format: .yuyv, width: 3840, height: 2160, rates: [Rational(30)])]
        let chosen = try #require(Self.choice(modes, for: .default))
        #expect(chosen == (.yuyv, false, 1280, 720, Rational(24)))
        // A mode that reaches a third of the rate loses to a 2x smaller one at full rate.
        let slow = [Mode(format: .i420, width: 1280, height: 720, rates: [Rational(10)]),
                    Mode(format: .yuyv, width: 960, height: 540, rates: [Rational(30)])]
        #expect(try #require(Self.choice(slow, for: .default)) == (.yuyv, false, 960, 540, Rational(30)))
    }

    @Test func nothingUsableGivesNothing() {
        #expect(Self.choice([], for: .default) == nil)
    }

    /// A mode change mid-show: a camera sending JPEG keeps sending JPEG where the device offers the
    /// new size and rate so (its passthrough ISO records those images), where a fresh choice would take
    /// raw at equal scores; a raw camera keeps the ranking's choice; a size offered raw only is raw.
    @Test func aJPEGCameraStaysJPEGAcrossAModeChangeWhereTheDeviceOffersIt() throws {
        let webcam = Self.v4l2(Self.webcam + [Mode(format: nil, width: 640, height: 480, rates: [Rational(30), Rational(15)]),
                                              Mode(format: .yuyv, width: 320, height: 240, rates: [Rational(30)])])
        let jpeg720 = V4L2ModeChoice.Choice(fourcc: .mjpeg, width: 1280, height: 720, frameRate: Rational(30))
        let raw480 = V4L2ModeChoice.Choice(fourcc: .yuyv, width: 640, height: 480, frameRate: Rational(30))
        // A fresh choice at VGA takes raw (no decode to pay)...
        let fresh = try #require(V4L2ModeChoice.ranked(webcam, width: 640, height: 480, frameRate: Rational(30)).first)
        #expect(fresh.fourcc == .yuyv)
        // ...a JPEG camera asked for VGA stays JPEG, at the same size and rate.
        let kept = try #require(V4L2ModeChoice.forChange(from: jpeg720, in: webcam, width: 640, height: 480, frameRate: Rational(30)))
        #expect(kept == V4L2ModeChoice.Choice(fourcc: .mjpeg, width: 640, height: 480, frameRate: Rational(30)), "\(kept)")
        // A raw camera gets the ranking's choice, JPEG where only that reaches the size and rate.
        #expect(V4L2ModeChoice.forChange(from: raw480, in: webcam, width: 640, height: 480, frameRate: Rational(30)) == fresh)
        #expect(V4L2ModeChoice.forChange(from: raw480, in: webcam, width: 1280, height: 720, frameRate: Rational(30))?.fourcc == .mjpeg)
        // A size the device sends raw only: raw, for a JPEG camera too.
        let small = try #require(V4L2ModeChoice.forChange(from: jpeg720, in: webcam, width: 320, height: 240, frameRate: Rational(30)))
        #expect(small.fourcc == .yuyv && small.width == 320, "\(small)")
    }
}

/// The pixel-format table keeps V4L2 fourccs and SPA ids as plain data: each must be the C headers' value.
@Suite struct PixelFormatTableWireTests {
    @Test func fourCCsAreTheKernelsCodes() {
        let kernel: [String: UInt32] = [
            "YU12": cv4l2_pix_fmt_yuv420(), "NV12": cv4l2_pix_fmt_nv12(), "YUYV": cv4l2_pix_fmt_yuyv(), "UYVY": cv4l2_pix_fmt_uyvy(),
            "RGB3": cv4l2_pix_fmt_rgb24(), "BGR3": cv4l2_pix_fmt_bgr24(), "AR24": cv4l2_pix_fmt_abgr32(), "XR24": cv4l2_pix_fmt_xbgr32(),
            "AB24": cv4l2_pix_fmt_rgba32(), "XB24": cv4l2_pix_fmt_rgbx32(),
        ]
        var listed = 0
        for row in PixelFormat.table {
            for code in row.v4l2FourCCs {
                listed += 1
                #expect(FourCC(code)?.rawValue == kernel[code], "\(code)")
                #expect(FourCC(rawValue: kernel[code] ?? 0).publishedFormat == row.format, "\(code)")
            }
        }
        #expect(listed == kernel.count)
        #expect(FourCC.mjpeg.publishedFormat == .i420 && FourCC("H264")!.publishedFormat == nil)
    }

    @Test func spaIDsArePipeWiresValues() {
        let spa: [String: spa_video_format] = [
            "I420": SPA_VIDEO_FORMAT_I420, "NV12": SPA_VIDEO_FORMAT_NV12, "YUY2": SPA_VIDEO_FORMAT_YUY2, "UYVY": SPA_VIDEO_FORMAT_UYVY,
            "RGB": SPA_VIDEO_FORMAT_RGB, "BGR": SPA_VIDEO_FORMAT_BGR, "BGRx": SPA_VIDEO_FORMAT_BGRx, "BGRA": SPA_VIDEO_FORMAT_BGRA,
            "RGBx": SPA_VIDEO_FORMAT_RGBx, "RGBA": SPA_VIDEO_FORMAT_RGBA,
        ]
        var listed = 0
        for row in PixelFormat.table {
            for (id, name) in row.pipeWire {
                listed += 1
                #expect(spa[name]?.rawValue == id, "\(name)")
                #expect(PipeWireVideoFormats.pixelFormat(spaFormat: id) == row.format && PipeWireVideoFormats.name(spaFormat: id) == name)
            }
            #expect(PipeWireVideoFormats.spaFormat(for: row.format) == row.pipeWire.first?.spaID ?? 0)
        }
        #expect(listed == spa.count)
    }
}

/// Plane layouts for frames stored in one block, as V4L2 and PipeWire deliver them.
@Suite struct ContiguousPlaneLayoutTests {
    @Test func chromaFollowsLumaAtTheTablesStride() {
        #expect(PixelFormat.i420.planeLayouts(height: 3, contiguousWithStride: 8) ==
                [PlaneLayout(offset: 0, stride: 8, rows: 3), PlaneLayout(offset: 24, stride: 4, rows: 2), PlaneLayout(offset: 32, stride: 4, rows: 2)])
        #expect(PixelFormat.nv12.planeLayouts(height: 4, contiguousWithStride: 16) ==
                [PlaneLayout(offset: 0, stride: 16, rows: 4), PlaneLayout(offset: 64, stride: 16, rows: 2)])
        #expect(PixelFormat.yuyv.planeLayouts(height: 2, contiguousWithStride: 1280) == [PlaneLayout(offset: 0, stride: 1280, rows: 2)])
        #expect(PixelFormat.nv12.rowBytes(width: 5) == [5, 6] && PixelFormat.yuyv.rowBytes(width: 5) == [12] && PixelFormat.bgr24.rowBytes(width: 5) == [15])
    }
}
