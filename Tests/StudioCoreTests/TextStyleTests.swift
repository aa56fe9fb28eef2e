import Foundation
import Testing
@testable import StudioCore

@Suite struct TextStyleTests {
    @Test func parsesColours() {
        #expect(RGBColor(parsing: "#FF8000") == RGBColor(red: 255, green: 128, blue: 0))
        #expect(RGBColor(parsing: "0a0B0c") == RGBColor(red: 10, green: 11, blue: 12))
        #expect(RGBColor(parsing: "White") == .white)
        #expect(RGBColor(parsing: "yellow") == RGBColor(red: 255, green: 255, blue: 0))
        #expect(RGBColor(parsing: "#12345") == nil)
        #expect(RGBColor(parsing: "#GG0000") == nil)
        #expect(RGBColor(parsing: "+12345") == nil)
        #expect(RGBColor(parsing: "chartreuse") == nil)
        #expect(RGBColor(red: 255, green: 8, blue: 0).description == "#ff0800")
        for (name, color) in RGBColor.names { #expect(RGBColor(parsing: color.description) == RGBColor(parsing: name)) }
    }

    @Test func colourIsCodedAsTheOperatorWritesIt() throws {
        let style = TextStyle(color: RGBColor(red: 255, green: 128, blue: 0), box: .black)
        let json = try JSONEncoder().encode(style)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains(##""color":"#ff8000""##) && text.contains(##""box":"#000000""##), "\(text)")
        #expect(try JSONDecoder().decode(TextStyle.self, from: json) == style)
        #expect(try JSONDecoder().decode([RGBColor].self, from: Data(##"["white", "#0000FF"]"##.utf8)) == [.white, RGBColor(red: 0, green: 0, blue: 255)])
        let error = #expect(throws: DecodingError.self) { try JSONDecoder().decode([RGBColor].self, from: Data(#"["mauve"]"#.utf8)) }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.debugDescription == "'mauve' is not a colour: use #RRGGBB or one of black, white, grey, red, green, blue, yellow, cyan, magenta")
    }

    @Test func problemsInTheOperatorsWords() {
        #expect(TextStyle().problem == nil)
        #expect(TextStyle(size: 3).problem == "text size must be between 4 and 1024 pixels (got 3)")
        #expect(TextStyle(box: .black, boxOpacity: 1.5).problem == "box opacity must be between 0 and 1 (got 1.5)")
        #expect(TextStyle(padding: -1).problem == "padding must be between 0 and 1024 pixels (got -1)")
        #expect(TextStyle(font: "").problem == "font must name a font file")
        #expect(TextAlignment(rawValue: "center") == .center)
    }
}
