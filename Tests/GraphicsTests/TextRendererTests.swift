import Foundation
import FrameDrawing
import StudioCore
import Testing
@testable import Graphics

/// FreeType rendering with Debian's DejaVu fonts, checked in the picture's own pixels.
@Suite struct TextRendererTests {
    private static let blue = RGBColor(red: 0, green: 0, blue: 255)

    private static func color(_ picture: KeyedPicture, _ x: Int, _ y: Int) -> YUVColor {
        picture.picture.averageColor(in: PixelRect(x: x, y: y, width: 1, height: 1))!
    }

    /// The columns (x) whose pixels have any alpha above `threshold` in rows `rows`.
    private static func inkColumns(_ picture: KeyedPicture, rows: Range<Int>, threshold: UInt8 = 128) -> [Int] {
        (0..<picture.width).filter { x in rows.contains { picture.alpha(x: x, y: $0) > threshold } }
    }

    @Test func boxHasItsColourAtTheCornersAndTheLettersAreBright() throws {
        let style = TextStyle(size: 40, color: .white, box: Self.blue, padding: 12)
        let picture = try TextRenderer().render("Studio", style: style)
        // A solid box makes the whole picture opaque: no alpha plane.
        #expect(picture.alpha == nil)
        #expect(picture.width % 2 == 0 && picture.height % 2 == 0)
        let box = YUVColor(Self.blue)
        for (x, y) in [(0, 0), (picture.width - 1, 0), (0, picture.height - 1), (picture.width - 1, picture.height - 1)] {
            #expect(Self.color(picture, x, y) == box, "corner \(x),\(y): \(Self.color(picture, x, y))")
        }
        // Somewhere inside the padding, the letters: luma up at the white text's level.
        var bright = 0
        for y in 12..<(picture.height - 12) {
            for x in 12..<(picture.width - 12) where Self.color(picture, x, y).y > 200 { bright += 1 }
        }
        #expect(bright > 100, "only \(bright) bright pixels")
        // Nothing bright in the padding.
        for x in 0..<picture.width { #expect(Self.color(picture, x, 5).y == box.y) }
    }

    @Test func withoutABoxAlphaIsTheGlyphCoverage() throws {
        let style = TextStyle(size: 32, color: RGBColor(red: 255, green: 255, blue: 0))
        let picture = try TextRenderer().render("H", style: style)
        let alpha = try #require(picture.alpha)
        #expect(picture.alpha(x: 0, y: 0) == 0)
        #expect(alpha.contains(255), "a solid stem of the H is fully covered")
        #expect(alpha.contains { $0 > 0 && $0 < 255 }, "anti-aliased edges")
        // Where the letter is, its colour (straight alpha: no dark fringe).
        let yellow = YUVColor(red: 255, green: 255, blue: 0)
        let covered = (0..<(picture.width * picture.height)).filter { alpha[$0] == 255 }
        #expect(covered.allSatisfy { Self.color(picture, $0 % picture.width, $0 / picture.width).y == yellow.y })
        // The letter's ink: more than one stem's worth of columns, fewer than the whole width.
        let columns = Self.inkColumns(picture, rows: 0..<picture.height)
        #expect(columns.count > 8 && columns.count < picture.width)
    }

    @Test func longerTextIsWiderAndMoreLinesAreTaller() throws {
        let renderer = TextRenderer()
        let style = TextStyle(size: 24)
        let short = try renderer.render("Hi", style: style)
        let long = try renderer.render("Hello, studio", style: style)
        #expect(long.width > short.width * 3)
        #expect(long.height == short.height)
        let twoLines = try renderer.render("Hi\nthere", style: style)
        #expect(twoLines.height > short.height * 3 / 2)
        let bold = try renderer.render("Hello, studio", style: TextStyle(font: TextStyle.boldFont, size: 24))
        #expect(bold.width > long.width, "DejaVu Sans Bold is wider than the regular face")
        // An emptied caption is a transparent picture one line high, not an error.
        let empty = try renderer.render("", style: style)
        #expect(empty.height == short.height && empty.width == 2)
        #expect(empty.alpha?.allSatisfy { $0 == 0 } == true)
    }

    @Test func alignmentMovesShortLines() throws {
        let renderer = TextRenderer()
        func firstLineInk(_ alignment: TextAlignment) throws -> (picture: KeyedPicture, columns: [Int]) {
            let picture = try renderer.render("I\nWWWWWW", style: TextStyle(size: 30, alignment: alignment))
            return (picture, Self.inkColumns(picture, rows: 0..<(picture.height / 3)))
        }
        let left = try firstLineInk(.left), centre = try firstLineInk(.center), right = try firstLineInk(.right)
        let width = left.picture.width
        #expect(try #require(left.columns.max()) < width / 4)
        #expect(try #require(right.columns.min()) > width * 3 / 4)
        let middle = try #require(centre.columns.min())
        #expect(middle > width / 3 && middle < width * 2 / 3)
    }

    @Test func boxOpacityIsTheAlphaAroundTheLetters() throws {
        let style = TextStyle(size: 20, color: .white, box: .black, boxOpacity: 0.5, padding: 6)
        let picture = try TextRenderer().render("x", style: style)
        #expect(picture.alpha(x: 0, y: 0) == 128)
        #expect(Self.color(picture, 0, 0) == YUVColor(RGBColor.black))
        #expect(picture.alpha?.contains(255) == true)
    }

    @Test func rendersATextOncePerChange() throws {
        let renderer = TextRenderer()
        let style = TextStyle(size: 30)
        let first = try renderer.render("Guest: Ada", style: style)
        let again = try renderer.render("Guest: Ada", style: style)
        #expect(first.picture.storage === again.picture.storage)
        #expect(renderer.cachedCount == 1)
        let changed = try renderer.render("Guest: Grace", style: style)
        #expect(changed.picture.storage !== first.picture.storage)
        #expect(renderer.cachedCount == 2)
        for index in 0..<(TextRenderer.cacheLimit + 5) { _ = try renderer.render("line \(index)", style: style) }
        #expect(renderer.cachedCount == TextRenderer.cacheLimit)
    }

    @Test func missingFontIsNamedWithFreeTypesReason() throws {
        let path = "/nonexistent-\(UUID().uuidString.prefix(8)).ttf"
        let error = #expect(throws: GraphicsError.self) { try TextRenderer().render("x", style: TextStyle(font: path)) }
        #expect(error?.description == "font '\(path)' cannot be loaded: cannot open resource")
    }

    @Test func aFileThatIsNoFontIsNamed() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("font-\(UUID().uuidString.prefix(8)).ttf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "not a font\n".write(toFile: path, atomically: true, encoding: .utf8)
        let error = #expect(throws: GraphicsError.self) { try TextRenderer().render("x", style: TextStyle(font: path)) }
        #expect(error?.description == "font '\(path)' cannot be loaded: unknown file format")
    }

    @Test func sizeOutOfRangeIsRefused() throws {
        let renderer = TextRenderer()
        let error = #expect(throws: GraphicsError.self) { try renderer.render("x", style: TextStyle(size: 2)) }
        #expect(error?.description == "text size must be between 4 and 1024 pixels (got 2)")
        let huge = #expect(throws: GraphicsError.self) {
            try renderer.render(String(repeating: "W", count: 200), style: TextStyle(size: 200))
        }
        guard case .textTooLarge = huge else {
            Issue.record("expected textTooLarge, got \(String(describing: huge))")
            return
        }
    }
}
