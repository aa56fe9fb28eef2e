import Foundation
import StudioCore
import Control

/// A session's timeline as an SVG picture, drawn from its `report` alone: one lane for the program (each
/// interval in its source's colour, transitions as a gradient from one source's colour to the next, the
/// slate hatched), one lane per camera (live / lost), one per output (connected / reconnecting), marks for
/// the cuts and the encoder fallbacks, a legend of the sources and a time axis in program time (HH:MM:SS).
/// The same report gives the same picture, byte for byte: colours come from the source's name.
public enum TimelinePicture {
    /// The layout, in pixels. The program's span fills `plotWidth`, from `plotLeft`.
    public static let plotLeft = 140.0
    public static let plotWidth = 1000.0
    static let laneHeight = 22.0
    static let laneGap = 8.0
    static let top = 40.0

    /// Pixels per millisecond of program time for a program of `milliseconds`.
    public static func scale(programMilliseconds milliseconds: Int64) -> Double { plotWidth / Double(max(milliseconds, 1)) }

    /// Ten colours far apart (Tableau 10, its grey swapped for a dark blue: grey is the slate's).
    static let palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#393b79", "#bcbd22", "#17becf"]

    /// The colour of a source, from its name alone, so a source has the same colour in every picture: a name
    /// ending in a number N (`cam3`) takes the palette's Nth colour, so cameras 1 to 10 never share one;
    /// another name (a scene) the colour its FNV-1a hash picks.
    public static func colour(of source: String) -> String {
        if source == "slate" { return "#555555" }
        let digits = source.reversed().prefix { $0.isASCII && $0.isNumber }
        if !digits.isEmpty, digits.count < 6, let number = Int(String(digits.reversed())), number > 0 {
            return palette[(number - 1) % palette.count]
        }
        var hash: UInt32 = 2_166_136_261
        for byte in source.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return palette[Int(hash % UInt32(palette.count))]
    }

    public static func svg(_ report: ReportReply) -> String {
        let from = report.program.fromMilliseconds ?? 0
        let span = report.program.programMilliseconds
        let scale = scale(programMilliseconds: span)
        func x(_ milliseconds: Int64) -> Double { plotLeft + Double(milliseconds - from) * scale }
        let lanes = 1 + report.cameras.count + report.outputs.count
        let sources = report.program.totals.map(\.source)
        let legendY = top + Double(lanes) * (laneHeight + laneGap) + 34
        let height = legendY + 24 * Double((sources.count + 5) / 6) + 10
        let width = plotLeft + plotWidth + 30

        var body: [String] = []
        var defs = ["<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
            + "<rect width=\"6\" height=\"6\" fill=\"#d98c1f\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#7a4a00\" stroke-width=\"3\"/></pattern>",
                    "<pattern id=\"slate\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
            + "<rect width=\"6\" height=\"6\" fill=\"#555555\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#222222\" stroke-width=\"3\"/></pattern>"]
        let title = "Session \(report.session.id): \(ISO8601Time.format(report.session.startedAt)), program "
            + HistoryTime.programText(span) + ", \(report.ended)"
        body.append("<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">\(Markup.escaped(title))</text>")

        // The program lane.
        var y = top
        body.append(label("program", y: y))
        let intervals = report.program.intervals
        for (index, interval) in intervals.enumerated() {
            let fill = interval.sourceKind == "slate" ? "url(#slate)" : colour(of: interval.source)
            body.append(rect(x(interval.fromMilliseconds), y, Double(interval.durationMilliseconds) * scale, laneHeight, fill: fill,
                             attributes: "data-lane=\"program\" data-source=\"\(Markup.escaped(interval.source))\" data-from-ms=\"\(interval.fromMilliseconds)\" data-to-ms=\"\(interval.toMilliseconds)\"",
                             title: "\(interval.source) \(HistoryTime.programText(interval.fromMilliseconds)) – \(HistoryTime.programText(interval.toMilliseconds))"
                                + (interval.endedBy.map { ", ended by \($0)" } ?? "")))
            // A transition: its frames as a gradient from this source's colour to the next one's.
            if interval.endedBy == "transition", let start = interval.transitionFromMilliseconds, index + 1 < intervals.count,
               start < interval.toMilliseconds {
                let next = intervals[index + 1]
                let id = "transition\(index)"
                defs.append("<linearGradient id=\"\(id)\"><stop offset=\"0\" stop-color=\"\(colour(of: interval.source))\"/>"
                    + "<stop offset=\"1\" stop-color=\"\(colour(of: next.source))\"/></linearGradient>")
                body.append(rect(x(start), y, Double(interval.toMilliseconds - start) * scale, laneHeight, fill: "url(#\(id))",
                                 attributes: "data-mark=\"transition\"",
                                 title: "\(interval.via ?? "transition") \(interval.source) → \(next.source), "
                                    + "\(HistoryTime.programText(start)) – \(HistoryTime.programText(interval.toMilliseconds))"))
            }
            if index > 0, intervals[index - 1].endedBy == "cut" {
                body.append(mark(x(interval.fromMilliseconds), y - 3, y + laneHeight + 3, kind: "cut", colour: "#111111",
                                 title: "cut to \(interval.source) at \(HistoryTime.programText(interval.fromMilliseconds))"))
            }
        }
        for fallback in report.encoderFallbacks {
            let at = fallback.programMilliseconds ?? from
            let px = x(min(max(at, from), from + span))
            body.append("<path data-mark=\"fallback\" d=\"M\(f(px - 5)),\(f(y - 9)) L\(f(px + 5)),\(f(y - 9)) L\(f(px)),\(f(y - 1)) Z\" fill=\"#d62728\">"
                + "<title>\(Markup.escaped("encoder fallback \(fallback.from) → \(fallback.to)\(fallback.camera.map { " (\($0))" } ?? ""): \(fallback.reason)"))</title></path>")
        }

        // A lane per camera, per output: all well (live, connected) under the outages (lost, reconnecting).
        struct Lane { var kind, name, well, wellFill, outage, outageFill: String; var outages: [ReportReply.Outage] }
        let stateLanes = report.cameras.map { Lane(kind: "camera", name: $0.camera, well: "live", wellFill: "#8fd18f", outage: "lost",
                                                   outageFill: "#d62728", outages: $0.outages) }
            + report.outputs.map { Lane(kind: "output", name: $0.output, well: "connected", wellFill: "#7fb2dc", outage: "reconnecting",
                                        outageFill: "url(#hatch)", outages: $0.outages) }
        for lane in stateLanes {
            y += laneHeight + laneGap
            body.append(label(lane.name, y: y))
            body.append(rect(plotLeft, y, Double(span) * scale, laneHeight, fill: lane.wellFill,
                             attributes: "data-lane=\"\(lane.kind)\" data-state=\"\(lane.well)\"", title: "\(lane.name) \(lane.well)"))
            for outage in lane.outages {
                body.append(rect(x(outage.fromProgramMilliseconds), y, Double(outage.toProgramMilliseconds - outage.fromProgramMilliseconds) * scale,
                                 laneHeight, fill: lane.outageFill, attributes: "data-lane=\"\(lane.kind)\" data-state=\"\(lane.outage)\"",
                                 title: "\(lane.name) \(lane.outage)\(outage.reason.map { " (\($0))" } ?? ""), \(HistoryTime.programText(outage.durationMilliseconds))"))
            }
        }

        // The axis: about ten ticks at a round step.
        let axisY = y + laneHeight + 8
        body.append("<line x1=\"\(f(plotLeft))\" y1=\"\(f(axisY))\" x2=\"\(f(plotLeft + plotWidth))\" y2=\"\(f(axisY))\" stroke=\"#333333\"/>")
        let steps: [Int64] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14_400].map { $0 * 1000 }
        let step = steps.first { span / $0 <= 10 } ?? 28_800_000
        var tick = (from + step - 1) / step * step
        while tick <= from + span {
            let px = x(tick)
            body.append("<line x1=\"\(f(px))\" y1=\"\(f(axisY))\" x2=\"\(f(px))\" y2=\"\(f(axisY + 5))\" stroke=\"#333333\"/>")
            body.append("<text x=\"\(f(px))\" y=\"\(f(axisY + 17))\" font-size=\"11\" text-anchor=\"middle\">\(String(HistoryTime.programText(tick).prefix(8)))</text>")
            tick += step
        }

        // The legend: each source's colour, with its time on air.
        for (index, total) in report.program.totals.enumerated() {
            let lx = 10 + Double(index % 6) * 190, ly = legendY + Double(index / 6) * 24
            let fill = total.sourceKind == "slate" ? "url(#slate)" : colour(of: total.source)
            body.append("<rect data-legend=\"\(Markup.escaped(total.source))\" x=\"\(f(lx))\" y=\"\(f(ly))\" width=\"14\" height=\"14\" fill=\"\(fill)\"/>")
            body.append("<text x=\"\(f(lx + 20))\" y=\"\(f(ly + 12))\" font-size=\"12\">\(Markup.escaped("\(total.source) \(HistoryTime.programText(total.onAirMilliseconds).prefix(8)) (\(Int((total.share * 100).rounded())) %)"))</text>")
        }

        return """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="\(f(width))" height="\(f(height))" viewBox="0 0 \(f(width)) \(f(height))" \
        font-family="sans-serif" data-program-from-ms="\(from)" data-program-ms="\(span)" data-plot-left="\(f(plotLeft))" data-scale="\(scale)">
        <defs>\(defs.joined())</defs>
        <rect width="100%" height="100%" fill="#ffffff"/>
        \(body.joined(separator: "\n"))
        </svg>

        """
    }

    private static func label(_ text: String, y: Double) -> String {
        "<text x=\"10\" y=\"\(f(y + laneHeight - 6))\" font-size=\"13\">\(Markup.escaped(text))</text>"
    }

    private static func rect(_ x: Double, _ y: Double, _ width: Double, _ height: Double, fill: String, attributes: String, title: String) -> String {
        "<rect \(attributes) x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(max(width, 0)))\" height=\"\(f(height))\" fill=\"\(fill)\">"
            + "<title>\(Markup.escaped(title))</title></rect>"
    }

    private static func mark(_ x: Double, _ y1: Double, _ y2: Double, kind: String, colour: String, title: String) -> String {
        "<line data-mark=\"\(kind)\" x1=\"\(f(x))\" y1=\"\(f(y1))\" x2=\"\(f(x))\" y2=\"\(f(y2))\" stroke=\"\(colour)\" stroke-width=\"1.5\">"
            + "<title>\(Markup.escaped(title))</title></line>"
    }

    /// Two decimals, the same on every machine.
    static func f(_ value: Double) -> String { String(format: "%.2f", value) }

}
