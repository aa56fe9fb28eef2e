import StudioCore

/// Cameras and scenes share one namespace (`studio switch NAME` takes either), so a name means one thing.
///
/// What the config file alone can check, at start and on reload (an error at the scene's line):
/// - a scene named as a pin names a camera (`cameras.pins`), or as the pin's further devices are named
///   (`wide-2`, `wide-3`...);
/// - a scene named `camN`: the name the server gives a camera without a pin, now or when one appears;
/// - a scene that shows itself, directly or through other scenes (`scene a -> b -> a`).
///
/// What only the running server knows is checked when a camera appears and when scenes are set
/// (`StudioServer`): a camera whose stored name (a pin's, since removed) is a scene's is renamed to the
/// lowest free `camN`, with a warning; a scene that shows a camera that is not connected is a warning
/// (its layer shows the slate until the camera appears).
extension StudioConfiguration {
    /// Why `name` cannot be a scene's, given the pins; nil when it can.
    public func cameraNameClash(_ name: String) -> String? {
        if Self.isAutomaticCameraName(name) {
            return "\"\(name)\" is a camera's name (cameras without a pin are named cam1, cam2...); a scene needs its own"
        }
        for pin in cameras.pins {
            let pinned = pin.name.name
            if name == pinned { return "\"\(name)\" is a camera's name (cameras.pins); a scene needs its own" }
            if name.hasPrefix(pinned + "-"), let number = Int(name.dropFirst(pinned.count + 1)), number >= 2 {
                return "\"\(name)\" is the name the pin \"\(pinned)\" gives a second device it fits (cameras.pins); a scene needs its own"
            }
        }
        if network.cameras.contains(where: { $0.name.name == name }) {
            return "\"\(name)\" is a network camera's name (network.pull); a scene needs its own"
        }
        if players.contains(where: { $0.name.name == name }) {
            return "\"\(name)\" is a player's name (players); a scene needs its own"
        }
        return nil
    }

    /// `camN` (N from 1, no leading zero): what the server names a camera that no pin names.
    public static func isAutomaticCameraName(_ name: String) -> Bool {
        guard name.hasPrefix("cam") else { return false }
        let digits = name.dropFirst(3)
        return !digits.isEmpty && digits.first != "0" && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The first cycle of scenes showing scenes, as `a -> b -> a`, and the index of the scene it starts
    /// at; nil when there is none.
    func sceneCycle() -> (index: Int, path: String)? {
        let names = Set(scenes.map(\.name))
        let shown = Dictionary(scenes.map { ($0.name, $0.cameraNames.filter(names.contains)) }, uniquingKeysWith: { first, _ in first })
        for (index, scene) in scenes.enumerated() {
            // Depth first from each scene, in file order: the first that reaches back to itself is reported.
            var stack: [(name: String, path: [String])] = [(scene.name, [scene.name])]
            var seen: Set<String> = []
            while let (name, path) = stack.popLast() {
                for next in shown[name] ?? [] {
                    if next == scene.name { return (index, (path + [next]).joined(separator: " -> ")) }
                    if seen.insert(next).inserted { stack.append((next, path + [next])) }
                }
            }
        }
        return nil
    }

    /// Scene layers that will show the slate, said for the log: a source that is no camera of `cameras`
    /// (those connected now) and no scene, or a scene (scenes inside scenes are not composed).
    public func sceneWarnings(cameras connected: [CameraID]) -> [String] {
        let cameraNames = Set(connected.map(\.name)), sceneNames = Set(scenes.map(\.name))
        var warnings: [String] = []
        for scene in scenes {
            for source in scene.cameraNames where !cameraNames.contains(source) {
                if sceneNames.contains(source) {
                    warnings.append("scene \(scene.name) shows scene \(source): a scene's layers show cameras, so that layer shows the slate")
                } else {
                    warnings.append("scene \(scene.name) shows \(source), which is not connected: its layer shows the slate until a camera named \(source) appears")
                }
            }
        }
        return warnings
    }
}
