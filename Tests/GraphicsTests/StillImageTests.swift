import Foundation
import FrameDrawing
import StudioCore
import Testing
import TestSupport
@testable import Graphics

/// Real PNG and JPEG files written by the ffmpeg CLI, loaded and checked pixel by pixel in Y'CbCr.
@Suite struct StillImageTests {
    /// A fresh directory for one test's files.
    private static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("graphics-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes one picture of the lavfi `graph` to `name` in `directory` with ffmpeg's encoder options.
    private static func write(_ name: String, in directory: URL, graph: String, options: [String] = []) throws -> String {
        let path = directory.appendingPathComponent(name).path
        _ = try MediaProbe.run(MediaProbe.ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", graph] + options + ["-frames:v", "1", path])
        return path
    }

    /// The pixel format ffprobe reads from the file (proves the test made the kind of PNG it meant to).
    private static func pixelFormat(_ path: String) throws -> String {
        let output = try MediaProbe.run(MediaProbe.ffprobe, ["-v", "error", "-select_streams", "v", "-show_entries", "stream=pix_fmt",
                                                             "-of", "csv=p=0", path])
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static let red = YUVColor(red: 255, green: 0, blue: 0)
    private static let blue = YUVColor(red: 0, green: 0, blue: 255)

    private static func color(_ picture: KeyedPicture, _ x: Int, _ y: Int) -> YUVColor {
        picture.picture.averageColor(in: PixelRect(x: x, y: y, width: 1, height: 1))!
    }

    /// Left half opaque red, right half blue at alpha 64.
    private static let halves = "color=black:s=64x32,format=rgba,geq=r='if(lt(X,32),255,0)':g=0:b='if(lt(X,32),0,255)':a='if(lt(X,32),255,64)'"

    @Test func rgbaPNGKeepsColoursAndAlpha() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.write("halves.png", in: directory, graph: Self.halves)
        #expect(try Self.pixelFormat(path) == "rgba")

        let image = try StillImage(contentsOf: path)
        #expect(image.sourceWidth == 64 && image.sourceHeight == 32)
        #expect(image.picture.width == 64 && image.picture.height == 32)
        #expect(image.picture.alpha != nil)
        #expect(image.picture.alpha(x: 8, y: 8) == 255)
        #expect(abs(Int(image.picture.alpha(x: 48, y: 20)) - 64) <= 1)
        #expect(Self.color(image.picture, 8, 8).distance(to: Self.red) < 6, "\(Self.color(image.picture, 8, 8))")
        #expect(Self.color(image.picture, 48, 20).distance(to: Self.blue) < 6, "\(Self.color(image.picture, 48, 20))")
    }

    @Test func scalesToTheSizeAskedFor() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.write("halves.png", in: directory, graph: Self.halves)

        let image = try StillImage(contentsOf: path, size: (width: 128, height: 48))
        #expect(image.sourceWidth == 64 && image.sourceHeight == 32)
        #expect(image.picture.width == 128 && image.picture.height == 48)
        #expect(image.picture.alpha?.count == 128 * 48)
        #expect(image.picture.alpha(x: 20, y: 24) == 255)
        #expect(abs(Int(image.picture.alpha(x: 100, y: 24)) - 64) <= 1)
        #expect(Self.color(image.picture, 20, 24).distance(to: Self.red) < 6)
        #expect(Self.color(image.picture, 100, 24).distance(to: Self.blue) < 6)
    }

    @Test func greyAlphaPNG() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Top half white opaque, bottom half mid grey at alpha 128.
        let graph = "color=black:s=32x32,format=rgba,geq=r='if(lt(Y,16),255,128)':g='if(lt(Y,16),255,128)':b='if(lt(Y,16),255,128)':a='if(lt(Y,16),255,128)'"
        let path = try Self.write("grey.png", in: directory, graph: graph, options: ["-pix_fmt", "ya8"])
        #expect(try Self.pixelFormat(path) == "ya8")

        let image = try StillImage(contentsOf: path)
        #expect(image.picture.alpha(x: 10, y: 4) == 255)
        #expect(abs(Int(image.picture.alpha(x: 10, y: 24)) - 128) <= 1)
        #expect(Self.color(image.picture, 10, 4).distance(to: .white) < 6)
        #expect(Self.color(image.picture, 10, 24).distance(to: .grey(128)) < 6, "\(Self.color(image.picture, 10, 24))")
    }

    @Test func palettePNGWithTransparency() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Left half opaque red, right half fully transparent; palettegen reserves a transparent entry (tRNS).
        let graph = "color=black:s=32x16:d=0.04,format=rgba,geq=r=255:g=0:b=0:a='if(lt(X,16),255,0)',split[a][b];[a]palettegen=reserve_transparent=1[p];[b][p]paletteuse"
        let path = try Self.write("palette.png", in: directory, graph: graph)
        #expect(try Self.pixelFormat(path) == "pal8")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).range(of: Data("tRNS".utf8)) != nil, "no transparency chunk")

        let image = try StillImage(contentsOf: path)
        #expect(image.picture.alpha(x: 4, y: 8) == 255)
        #expect(image.picture.alpha(x: 28, y: 8) == 0)
        #expect(Self.color(image.picture, 4, 8).distance(to: Self.red) < 6)
    }

    @Test func opaquePNGHasNoAlphaPlane() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.write("opaque.png", in: directory, graph: "color=blue:s=16x16,format=rgba")
        #expect(try Self.pixelFormat(path) == "rgba")
        let image = try StillImage(contentsOf: path)
        #expect(image.picture.alpha == nil)
        #expect(Self.color(image.picture, 8, 8).distance(to: Self.blue) < 6)
    }

    @Test func jpegIsOpaqueWithItsColour() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.write("photo.jpg", in: directory, graph: "color=0x2060C0:s=64x48", options: ["-q:v", "2"])
        let expected = YUVColor(red: 0x20, green: 0x60, blue: 0xC0)

        let image = try StillImage(contentsOf: path)
        #expect(image.picture.alpha == nil)
        #expect(image.sourceWidth == 64 && image.sourceHeight == 48)
        let centre = image.picture.picture.averageColor(in: PixelRect(x: 16, y: 16, width: 32, height: 16))!
        #expect(centre.distance(to: expected) < 8, "\(centre)")

        let scaled = try StillImage(contentsOf: path, size: (width: 30, height: 20))
        #expect(scaled.picture.width == 30 && scaled.picture.height == 20)
        #expect(Self.color(scaled.picture, 15, 10).distance(to: expected) < 8)
    }

    @Test func missingFileIsNamed() throws {
        let path = "/nonexistent-\(UUID().uuidString.prefix(8))/logo.png"
        let error = #expect(throws: GraphicsError.self) { try StillImage(contentsOf: path) }
        #expect(error == .imageNotFound(path: path))
        #expect(error?.description == "image '\(path)' not found")
    }

    @Test func textFileIsNotAnImage() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("logo.png").path
        try "this is not a picture\n".write(toFile: path, atomically: true, encoding: .utf8)

        let error = #expect(throws: GraphicsError.self) { try StillImage(contentsOf: path) }
        #expect(error?.description == "'\(path)' is not a PNG or JPEG image: it starts with neither the PNG nor the JPEG signature")
    }

    @Test func truncatedPNGIsNotAnImage() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let whole = try Self.write("whole.png", in: directory, graph: "testsrc=s=64x64")
        let path = directory.appendingPathComponent("cut.png").path
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(60).write(to: URL(fileURLWithPath: path))

        let error = #expect(throws: GraphicsError.self) { try StillImage(contentsOf: path) }
        guard case .notAnImage(path, let reason) = error else {
            Issue.record("expected notAnImage, got \(String(describing: error))")
            return
        }
        #expect(reason.hasPrefix("libavcodec cannot decode it"), "\(reason)")
    }

    @Test func tooLargeStatesTheLimit() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.write("wide.png", in: directory, graph: "color=red:s=9000x8")

        let error = #expect(throws: GraphicsError.self) { try StillImage(contentsOf: path) }
        #expect(error?.description == "image '\(path)' is too large: 9000x8 pixels (the limit is 8192x8192)")
    }

    @Test func directoryAndBadSizeAreRefused() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = #expect(throws: GraphicsError.self) { try StillImage(contentsOf: directory.path) }
        #expect(error == .imageUnreadable(path: directory.path, reason: "it is not a regular file"))

        let path = try Self.write("small.png", in: directory, graph: "color=red:s=8x8")
        let sizeError = #expect(throws: GraphicsError.self) { try StillImage(contentsOf: path, size: (width: 0, height: 10)) }
        #expect(sizeError == .badSize(width: 0, height: 10))
    }
}
