import StudioCore
import Capture

/// How the server sets a compressed camera's decode demand (`CameraDemand`) beside what the switcher
/// says: the reduced picture is what the tiles take (their width, one per tile period), wanted while
/// someone watches them; an encoded ISO recording needs every frame at full size (a passthrough ISO
/// copies the JPEGs and needs none); `STUDIO_DECODE=full` in the server's environment forces full
/// decoding of every camera (to compare the cost, scripts/bench-decode-demand.sh).
struct DecodePolicy: Sendable {
    var reducedWidth = CameraDemand.defaultReducedWidth
    var reducedInterval = CameraDemand.defaultReducedInterval
    var forceFull = false

    /// The environment variable and the value that force full decoding.
    static let environmentKey = "STUDIO_DECODE"
    static let forcedValue = "full"

    func prepare(_ camera: any Camera, recorded: Bool, tilesWatched: Bool) {
        guard let demand = camera.demand else { return }
        demand.setReducedTarget(width: reducedWidth, interval: reducedInterval)
        // The switcher says which cameras it shows and which stand by for a backup when the camera
        // becomes its source, right after it starts.
        demand.set(.seen, false)
        demand.set(.recorded, recorded)
        demand.set(.forced, forceFull)
        demand.set(.tiles, tilesWatched)
    }
}
