/// Text put into XML, SVG or HTML: the tally page, the vMix server's XML, the history's SVG timeline and
/// the editors' cut lists escape it here, the same way.
public enum Markup {
    /// `text` with `&`, `<`, `>` and `"` as entities: safe as element text and inside a double-quoted attribute.
    public static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }
}
