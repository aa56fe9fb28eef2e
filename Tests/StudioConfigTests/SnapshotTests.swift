import Foundation
import Testing
@testable import StudioConfig

/// The session's config snapshot (stored in the event store) keeps its exact shape: the same
/// configuration gives the same JSON text as before the config types became Codable.
@Suite struct SnapshotTests {
    static let fullYAML = """
    program:
      size: 1920x1080
      fps: 29.97
    video:
      encoder: x264
      preset: fast
      bitrate: 6M
      keyframe_interval: 1.5
    audio:
      source: "pipewire:alsa_input.usb-mic"
      bitrate: 160k
    outputs:
      - url: rtmp://a.rtmp.youtube.com/live2/abcd-efgh
        name: youtube
      - rtmp://127.0.0.1/live/third
    record: /var/lib/studio/recordings
    socket: /run/studio/studio.sock
    socket_group: studio
    cameras:
      backends: [pipewire]
      demo: 2
      iso: false
      iso_preset: superfast
      iso_encoder: vaapi
      pins:
        - match: usb-046d_HD_Pro_Webcam_C920
          name: cam1
          iso: true
          encoder: x264
          size: 1280x720
          fps: 30
          controls:
            focus_absolute: 30
            brightness: 140
        - {match: vivid-001, name: cam2}
    """

    @Test func defaultSnapshotIsUnchanged() {
        #expect(StudioConfiguration().jsonSnapshot() == Self.defaultJSON)
    }

    @Test func fullSnapshotIsUnchanged() throws {
        let config = try StudioConfiguration.parse(yaml: Self.fullYAML, source: "s.yaml")
        #expect(config.jsonSnapshot() == Self.fullJSON)
    }

    /// `audio.source` null when unset (the server's snapshot of a session writes the one it took).
    static let defaultJSON = ##"{"audio":{"bitrate":128000,"inputs":[],"master":{"ceiling":-1,"gain":0},"source":null},"cameras":{"backends":["pipewire","v4l2"],"demo":3,"iso":true,"iso_preset":"ultrafast","pins":[]},"database":null,"http":{"enabled":true,"listen":"127.0.0.1:8080","token":null},"outputs":[],"overlays":[],"program":{"format":"1280x720@30","fps":"30","height":720,"width":1280},"record":null,"scenes":[],"socket":null,"transition":{"color":"#000000","frames":15,"kind":"mix"},"video":{"bitrate":4500000,"encoder":"auto","keyframe_interval":2,"preset":"veryfast"}}"##
    static let fullJSON = ##"{"audio":{"bitrate":160000,"inputs":[],"master":{"ceiling":-1,"gain":0},"source":"pipewire:alsa_input.usb-mic"},"cameras":{"backends":["pipewire"],"demo":2,"iso":false,"iso_encoder":"vaapi","iso_preset":"superfast","pins":[{"controls":{"brightness":"140","focus_absolute":"30"},"encoder":"x264","fps":"30","iso":true,"match":"usb-046d_HD_Pro_Webcam_C920","name":"cam1","size":"1280x720"},{"match":"vivid-001","name":"cam2"}]},"database":null,"http":{"enabled":true,"listen":"127.0.0.1:8080","token":null},"outputs":[{"name":"youtube","url":"rtmp://a.rtmp.youtube.com/live2/****"},{"name":"output2","url":"rtmp://127.0.0.1/live/****"}],"overlays":[],"program":{"format":"1920x1080@30000/1001","fps":"30000/1001","height":1080,"width":1920},"record":"/var/lib/studio/recordings","scenes":[],"socket":"/run/studio/studio.sock","socket_group":"studio","transition":{"color":"#000000","frames":15,"kind":"mix"},"video":{"bitrate":6000000,"encoder":"x264","keyframe_interval":1.5,"preset":"fast"}}"##
}
