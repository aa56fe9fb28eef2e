import StudioConfig
import Testing

/// Expects `yaml` to be refused at `keyPath` with `words` in its message (what a config test of bad
/// settings checks, whatever the section).
func expectRefused(_ yaml: String, at keyPath: String, saying words: String, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        _ = try StudioConfiguration.parse(yaml: yaml, source: "t.yaml")
        Issue.record("accepted: \(yaml)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.keyPath == keyPath, "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(words), "\(error)", sourceLocation: sourceLocation)
    }
}
