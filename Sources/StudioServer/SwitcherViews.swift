import Foundation
import StudioCore
import Switcher
import Control
import StudioViews

// The replies (StudioViews) built from the switcher's values: they live here, beside the switcher, so
// that StudioViews (linked by the light `studio` executable) never links the media stack.

extension SwitchReply {
    init(_ outcome: SwitchOutcome, rate: Rational) {
        self.init(source: outcome.source.name, kind: outcome.source.camera == nil ? "scene" : "camera", camera: outcome.source.camera?.name,
                  previous: outcome.previous?.name, programMilliseconds: outcome.programTime.milliseconds, frame: Int(outcome.frameNumber),
                  transition: outcome.transition.map { TransitionReply($0, rate: rate) })
    }
}

extension OverlayReply {
    init(_ outcome: OverlayOutcome) {
        self.init(overlay: outcome.name, on: outcome.on, changed: outcome.changed, programMilliseconds: outcome.programTime.milliseconds,
                  frame: Int(outcome.frameNumber))
    }
}

extension StatusReply.ProgramView.BackupView {
    init(_ status: BackupStatus) {
        self.init(lost: status.lost, onAir: status.onAir, back: status.back.rawValue, cutBack: status.cutBack)
    }
}

extension StudioServer {
    func scenesView() -> ScenesReply {
        let status = switcher.status
        let format = switcher.format
        func views(_ layers: [ResolvedLayer]) -> [ScenesReply.LayerView] {
            layers.map { layer in
                ScenesReply.LayerView(source: layer.source.description, rect: [layer.rect.x, layer.rect.y, layer.rect.width, layer.rect.height],
                                      opacity: layer.opacity)
            }
        }
        let configuration = reloader.configuration
        let scenes = configuration.scenes.filter { status.scenes.contains($0.name) }.map { scene in
            ScenesReply.SceneView(name: scene.name, layout: scene.layout?.rawValue, sources: scene.cameraNames,
                                  layers: views(scene.resolvedLayers(width: format.width, height: format.height)),
                                  tally: status.tally[scene.name]?.rawValue)
        }
        let declared = Dictionary(configuration.overlays.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let overlays = status.overlays.map { overlay in
            ScenesReply.OverlayView(name: overlay.name, on: overlay.on,
                                    layers: views(declared[overlay.name]?.resolvedLayers(width: format.width, height: format.height) ?? []))
        }
        return ScenesReply(scenes: scenes, overlays: overlays, program: status.program?.name, preview: status.preview?.name)
    }
}
