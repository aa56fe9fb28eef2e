import Testing
@testable import TallyOut

/// vMix's TCP API as this server speaks it: the request grammar, the tally digits, the XML's numbering
/// and the functions' inputs.
@Suite struct VMixProtocolTests {
    private let board = TallyBoard(lamps: [
        TallyLamp(name: "cam1", kind: .camera, index: 1),
        TallyLamp(name: "cam2", kind: .camera, index: 2, program: true),
        TallyLamp(name: "cam3", kind: .camera, index: 3, preview: true),
        TallyLamp(name: "cam4", kind: .camera, index: 4, program: true, preview: true),
        TallyLamp(name: "a&b", kind: .scene, index: nil),
    ], program: "cam2", preview: "cam3")

    @Test func requestsParseInAnyCaseAndTheRestIsRefusedWithER() {
        #expect(VMixProtocol.parse("TALLY") == .tally)
        #expect(VMixProtocol.parse("tally") == .tally)
        #expect(VMixProtocol.parse("SUBSCRIBE TALLY") == .subscribeTally)
        #expect(VMixProtocol.parse("UNSUBSCRIBE TALLY") == .unsubscribeTally)
        #expect(VMixProtocol.parse("XML") == .xml)
        #expect(VMixProtocol.parse("FUNCTION Cut") == .function(name: "Cut", query: [:]))
        #expect(VMixProtocol.parse("FUNCTION PreviewInput Input=3") == .function(name: "PreviewInput", query: ["Input": "3"]))
        #expect(VMixProtocol.parse("FUNCTION CutDirect Input=my%20cam&Mix=0") == .function(name: "CutDirect", query: ["Input": "my cam", "Mix": "0"]))
        for (line, start) in [("SUBSCRIBE ACTS", "SUBSCRIBE ER "), ("XMLTEXT vmix/inputs", "XMLTEXT ER "), ("TALLY 3", "TALLY ER "),
                              ("FUNCTION", "FUNCTION ER "), ("", "ER "), ("\u{1}\u{2}junk", "?"), ("ACTS Input 1", "ACTS ER ")] {
            guard case .refused(let reply) = VMixProtocol.parse(line) else { Issue.record("\(line) accepted"); continue }
            #expect(reply.hasPrefix(start), "\(line) -> \(reply)")
            #expect(reply.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) }, "one printable line: \(reply)")
        }
    }

    @Test func theTallyLineHasOneDigitPerInputProgramWinning() {
        #expect(VMixProtocol.tallyLine(board) == "TALLY OK 01210")
        #expect(VMixProtocol.tallyLine(TallyBoard()) == "TALLY OK ")
    }

    @Test func theXMLNumbersInputsInTheTallyOrder() {
        let xml = VMixProtocol.xml(board)
        #expect(xml.hasPrefix("<vmix><version>") && xml.hasSuffix("</vmix>"))
        #expect(xml.contains("<input key=\"cam1\" number=\"1\" type=\"Capture\" title=\"cam1\""))
        #expect(xml.contains("<input key=\"a&amp;b\" number=\"5\" type=\"Virtual\" title=\"a&amp;b\""))
        #expect(xml.contains("<active>2</active><preview>3</preview>"))
        let reply = VMixProtocol.xmlReply(board)
        let head = String(decoding: reply.prefix { $0 != 0x0A }, as: UTF8.self)
        let body = reply.count - head.utf8.count - 1
        #expect(head == "XML \(body)\r", "the length counts exactly the bytes after the first line")
        #expect(VMixProtocol.xml(TallyBoard()).contains("<inputs></inputs><active>0</active><preview>0</preview>"))
    }

    @Test func functionsFindTheirInputByNumberOrName() {
        #expect(VMixProtocol.action("PreviewInput", query: ["Input": "3"], board: board) == .success(.preview("cam3")))
        #expect(VMixProtocol.action("previewinput", query: ["input": "cam4"], board: board) == .success(.preview("cam4")))
        #expect(VMixProtocol.action("CutDirect", query: ["Input": "5"], board: board) == .success(.switchTo("a&b")))
        #expect(VMixProtocol.action("Cut", query: [:], board: board) == .success(.cut))
        for (name, query) in [("PreviewInput", ["Input": "9"]), ("PreviewInput", ["Input": "0"]), ("CutDirect", [:]),
                              ("CutDirect", ["Input": "nope"]), ("Fade", [:])] {
            guard case .failure(let refusal) = VMixProtocol.action(name, query: query, board: board) else {
                Issue.record("\(name) \(query) accepted"); continue
            }
            #expect(!refusal.message.isEmpty)
        }
    }
}
