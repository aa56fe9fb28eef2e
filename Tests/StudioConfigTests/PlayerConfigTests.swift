import Testing
import StudioConfig
import StudioCore

/// `players:`: each entry a player named by `name`, its items relative to the config's directory.
@Suite struct PlayerConfigTests {
    @Test func playersAreReadWithTheirItemsEndAndStillTime() throws {
        let yaml = """
        players:
          - name: intro
            items: [media/intro.mov]
          - name: breaks
            items: [media/brb.mp4, /srv/media/countdown.png]
            still_seconds: 10
            end: loop
            autoplay: true
            restart: yes
        """
        let config = try StudioConfiguration.parse(yaml: yaml, source: "studio.yaml", directory: "/etc/studio")
        #expect(config.players == [
            PlayerSpec(name: "intro", items: ["/etc/studio/media/intro.mov"], end: .hold, stillSeconds: 5),
            PlayerSpec(name: "breaks", items: ["/etc/studio/media/brb.mp4", "/srv/media/countdown.png"], end: .loop, stillSeconds: 10,
                       autoplay: true, restart: true),
        ])
        #expect(config.players[1].identity == "player:breaks")
        // A cut back with its own transition, in ms at the program's rate (30 fps by default).
        let cutBack = try StudioConfiguration.parse(yaml: """
        players:
          - {name: intro, items: [intro.mov], end: cut-back, end_transition: {kind: dip, ms: 500}}
        """, source: "studio.yaml", directory: "/etc/studio")
        #expect(cutBack.players[0].end == .cutBack && cutBack.players[0].endTransition == TransitionSpec(kind: .dip, frames: 15), "\(cutBack.players)")
        #expect(throws: ConfigError.self) {
            try StudioConfiguration.parse(yaml: "players:\n  - {name: intro, items: [a.mov], end_transition: {kind: mix, frames: 9000}}\n",
                                          source: "studio.yaml", directory: "/etc/studio")
        }
        #expect(config.players[1].item(named: "countdown.png") == 1 && config.players[1].item(named: "1") == 0)
        #expect(config.players[1].item(named: "3") == nil && config.players[1].item(named: "nosuch.mov") == nil)
        // In the session's snapshot.
        #expect(config.jsonSnapshot().contains(#""players":[{"autoplay":false,"end":"hold","items":["\/etc\/studio\/media\/intro.mov"]"#)
                || config.jsonSnapshot().contains(#""players":[{"autoplay":false,"end":"hold","items":["/etc/studio/media/intro.mov"]"#), "\(config.jsonSnapshot())")
    }
}
