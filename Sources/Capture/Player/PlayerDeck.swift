import Foundation
import StudioCore
import StudioSystem

/// The player's thread (`player.NAME`): takes the operator's commands, keeps `queue` filled from the
/// reader (at most `PlayerCamera.queuedPictures` pictures ahead), and at each tick of a grid at the
/// program's rate publishes the newest picture whose time has come (or the held one again, re-stamped,
/// so a cued, paused or ended player is live, not silent). Playing, it also publishes the pictures in
/// its queue with the tick each is shown from (`PictureSchedule`), for the program to take its tick's
/// own whenever this thread wakes; a picture whose tick passed before it was published (the thread
/// held up longer than its queue lasts) is not skipped: the play slips by the ticks it missed, held and
/// counted as repeated. Lives on that thread alone.
struct PlayerDeck {
    let camera: PlayerCamera
    let reader: PlayerReader
    private var queue: [PlayerEntry] = []
    private var state = PlayerStatus.State.cued
    /// The grid of the ticks, and the timeline's time at its origin (the position play started from).
    private var grid: FrameGrid
    private var timelineAtOrigin: Int64 = 0
    private var lastTick: Int64 = -1
    /// Where the timeline is: the time of the last tick played (cued: 0, where play starts).
    private var position: Int64 = 0
    /// The play on screen: its number, item, where on the timeline its item starts (its time 0), its
    /// length, and the time it was played from (its start, or where it was cued or sought to).
    private var current: (play: Int, item: Int, start: Int64, length: Int64?, from: Int64)?
    private var held: VideoFrame?
    private var black: VideoFrame?
    private var sequence: UInt64 = 0
    private var soundConnected = false
    /// Sound taken from the queue, each span with when it is to be heard: pushed once that time has come,
    /// stamped with it.
    private var sound: [(samples: [Float], due: UInt64)] = []
    private var counts = (repeated: 0, skipped: 0)
    /// The tick of the last picture taken from the queue (nil at the start of a play).
    private var lastPictureTick: Int64?
    /// The timeline's time of the last picture published in the schedule (nil: none since play).
    private var scheduledThrough: Int64?
    /// The play's end for the program's cut back (`end: cut-back`), kept once it ended.
    private var ending: PictureSchedule.Ending?

    init(camera: PlayerCamera) {
        self.camera = camera
        reader = PlayerReader(spec: camera.playerSpec, log: camera.log)
        grid = FrameGrid(origin: camera.clock.now(), rate: camera.rate)
    }

    private var interval: Int64 { Int64(1e9 * Double(camera.rate.denominator) / Double(camera.rate.numerator)) }

    mutating func run() {
        let clock = camera.clock
        cue(0)
        while !camera.worker.isStopRequested {
            camera.takeCommands { commands in
                for command in commands { apply(command) }
                publishSchedule()
                updateStatus()
            }
            let now = clock.now()
            let tick = grid.frame(at: now)
            if tick != lastTick {
                lastTick = tick
                if state == .playing { present(tick, now: now) }
                publishHeld(at: now)
            }
            pushSound(until: now)
            fill()
            publishSchedule()
            updateStatus()
            // Wakes at the next tick, when the next sound is due, and often enough for a command between ticks.
            clock.sleep(until: min(grid.nextTick(after: now), now + 20_000_000, sound.first?.due ?? .max))
        }
        if soundConnected { camera.sound.disconnected() }
    }

    // MARK: Transport

    private mutating func apply(_ command: PlayerCommand) {
        let wasPlaying = state == .playing
        switch command {
        case .play(let item):
            if let item { cue(item, how: "cued") } else if state == .ended { cue(reader.item, how: "cued") }
            guard state != .playing else { return }
            // Paused: on from the picture after the one shown; cued: from the first.
            startPlaying(from: state == .paused ? position + interval : position, origin: playOrigin())
        case .onAir(let at):
            let spec = camera.playerSpec
            if spec.restart, state != .cued || (current?.item ?? reader.item) != 0 { cue(0, how: "restarted") }
            guard spec.autoplay else { return }
            if state == .ended { cue(reader.item, how: "cued") }
            guard state != .playing else { return }
            // The picture on screen is the play's first, shown on the tick it went on air (tick 0, half a
            // frame before that program tick); the next one follows on the tick after.
            startPlaying(from: position, origin: at > UInt64(interval / 2) ? at - UInt64(interval / 2) : at)
            scheduledThrough = position
        case .offAir:
            if camera.playerSpec.restart { cue(0, how: "restarted") }
        case .pause:
            guard state == .playing else { return }
            state = .paused
            disconnectSound()
        case .stop:
            cue(0, how: "stopped")
        case .cue(let item, let offset):
            cue(item, at: offset, how: "cued")
        case .seek(let offset):
            cue(current?.item ?? reader.item, at: offset, how: "seek")
            if wasPlaying { apply(.play(item: nil)) }
        case .next:
            let next = min((current?.item ?? reader.item) + 1, camera.playerSpec.items.count - 1)
            cue(next, how: "next")
            if wasPlaying { apply(.play(item: nil)) }
        }
    }

    /// Plays on from `time` on the timeline, at tick 0 of a grid from `origin`.
    private mutating func startPlaying(from time: Int64, origin: UInt64) {
        timelineAtOrigin = time
        state = .playing
        grid = FrameGrid(origin: origin, rate: camera.rate)
        lastTick = -1
        lastPictureTick = nil
        camera.sound.newStream()
    }

    /// Where a play's tick 0 lies: now, or with the program's origin known, half a frame before the
    /// program's next tick (so its first picture, published now, is there for that tick, and each next
    /// one half a frame before the program takes it).
    private func playOrigin() -> UInt64 {
        let now = camera.clock.now()
        guard let origin = camera.programOrigin.origin else { return now }
        let next = FrameGrid(origin: origin, rate: camera.rate).nextTick(after: now)
        return next > UInt64(interval / 2) ? next - UInt64(interval / 2) : now
    }

    /// To `item`'s first frame, stopped: the play on screen ends (`how`), the reader starts over.
    private mutating func cue(_ item: Int, at offset: Int64 = 0, how: String? = nil) {
        if let how, state == .playing || state == .paused { endPlay(how: how, at: position) }
        disconnectSound()
        reader.restart(at: item)
        queue.removeAll()
        current = nil
        position = 0
        state = .cued
        // Sought by libavformat to the keyframe before `offset` (or read forward from the start where
        // the file cannot seek), then decoded on to it: the picture there is the first in the queue.
        if offset > 0 { reader.seek(to: offset) }
        fill()
        // A restarted reader's timeline starts at 0.
        let at = offset > 0 ? skip(to: offset) : nil
        if let first = queue.first(where: { if case .picture = $0.content { true } else { false } }), case .picture(let frame) = first.content {
            held = frame
            current = (first.play, first.item, 0, first.length, at ?? first.time)
            position = at ?? first.time
        }
        lastTick = -1
    }

    /// Reads on to `time` on the timeline (from the keyframe the reader sought, or from the item's
    /// start), dropping what comes before it: the picture shown at that time first in the queue (the one
    /// at it, else the one before it; past the item's end, its last), the sound from it (a span across it
    /// cut there). Returns where that puts the timeline (the time, or the last picture's past the end).
    /// The picture on screen is published again at each tick meanwhile, so a long read is no loss.
    private mutating func skip(to time: Int64) -> Int64 {
        var last: PlayerEntry?
        var published = camera.clock.now()
        func isPicture(_ entry: PlayerEntry) -> Bool { if case .picture = entry.content { true } else { false } }
        func isEnd(_ entry: PlayerEntry) -> Bool { if case .itemEnd = entry.content { true } else { false } }
        while true {
            let now = camera.clock.now()
            if now >= published + UInt64(interval) {
                publishHeld(at: now)
                published = now
            }
            var cut: PlayerEntry?
            while let first = queue.first, first.time + 1_000_000 < time, !isEnd(first) {
                queue.removeFirst()
                if isPicture(first) { last = first }
                cut = first.soundHeard(from: time, format: camera.sound.format) ?? cut
            }
            if let cut { queue.insert(cut, at: queue.firstIndex { $0.time >= time } ?? queue.count) }
            // What is left is at or after the time, up to the item's end: done once a picture or the end is read.
            if queue.contains(where: { isPicture($0) || isEnd($0) }) { break }
            if reader.isFinished || camera.worker.isStopRequested { break }
            fill()
        }
        let next = queue.first { isPicture($0) || isEnd($0) }
        if let next, isPicture(next), next.time <= time + 1_000_000 { return next.time }
        guard let last else { return next?.time ?? time }
        queue.insert(last, at: 0)
        // Between two pictures (or within the last one's length): the earlier is the one at the time.
        return next.map { $0.time > time } == true ? time : last.time
    }

    // MARK: Playing

    /// The first tick that shows a picture (or takes an end) at `time` on the play's timeline. A
    /// millisecond's slack: pictures stamped at n/rate land on the tick of the same time.
    private func firstTick(showing time: Int64) -> Int64 {
        grid.firstFrame(atOrAfter: grid.origin + UInt64(max(0, time - timelineAtOrigin - 1_000_000)))
    }

    /// Publishes the newest picture due at `tick`, pushes the sound due, and takes the ends passed.
    private mutating func present(_ tick: Int64, now: UInt64) {
        // The first tick the program has still to take (it takes each half a frame after its time; a
        // microsecond's slack for the rounding of the two grids).
        let open = grid.time(ofFrame: tick) + UInt64(interval / 2) <= now + 1_000 ? tick + 1 : tick
        var time = timelineAtOrigin + Int64(grid.time(ofFrame: tick) - grid.origin)
        var shown: VideoFrame?
        reading: while true {
            // Read on while the queue is emptied (the thread was held up past what it had read).
            if queue.isEmpty { fill() }
            guard let entry = queue.first, entry.time <= time + 1_000_000 else { break }
            queue.removeFirst()
            switch entry.content {
            case .picture(let frame):
                var due = firstTick(showing: entry.time)
                // Its tick passed before the program could have it (never published): the play slips,
                // to show it on the first tick still to come.
                if due < open, scheduledThrough.map({ entry.time > $0 }) ?? true {
                    timelineAtOrigin -= (open - due) * interval
                    time = timelineAtOrigin + Int64(grid.time(ofFrame: tick) - grid.origin)
                    due = open
                    if due > tick {
                        queue.insert(entry, at: 0)
                        break reading
                    }
                }
                // Skipped: another picture had its tick; repeated: ticks between this one's and the last's.
                if let last = lastPictureTick {
                    if due <= last { counts.skipped += 1 } else { counts.repeated += Int(due - last - 1) }
                }
                lastPictureTick = due
                shown = frame
                if current?.play != entry.play || !playStarted { startPlay(entry) }
            case .audio(let samples):
                if !soundConnected {
                    camera.sound.connected(camera.id.name)
                    soundConnected = true
                }
                // Pushed when its last sample is due on the clock (its time on the play's timeline), stamped
                // with that time: the program places a picture by when it was published, a sound by its stamp.
                let format = camera.sound.format
                let end = entry.time + Int64(samples.count / max(1, format.channels)) * 1_000_000_000 / Int64(format.sampleRate)
                sound.append((samples, UInt64(max(0, Int64(grid.origin) + end - timelineAtOrigin))))
            case .itemEnd(let how, let isBlack):
                endPlay(how: how, at: entry.time)
                if how == "end" || how == "truncated" {
                    state = .ended
                    // Its last sound (due within half a frame) goes out before the input is let go.
                    pushSound(until: .max)
                    disconnectSound()
                    if isBlack { held = blackFrame() }
                    position = time
                    return
                }
            }
        }
        position = time
        if let shown { held = shown }
    }

    /// Whether the play on screen has had its `clip_started` (a cued play has not, until it plays).
    private var playStarted = false

    private mutating func startPlay(_ entry: PlayerEntry) {
        current = (entry.play, entry.item, entry.itemStart, entry.length, entry.time)
        playStarted = true
        var details = ["item": PlayerSpec.itemName(camera.playerSpec.items[entry.item]), "item_number": "\(entry.item + 1)"]
        if let length = entry.length { details["duration_ms"] = "\(length / 1_000_000)" }
        camera.emit(StudioEvent(kind: .clipStarted, camera: camera.id, details: details))
    }

    private mutating func endPlay(how: String, at time: Int64) {
        guard playStarted, let current else { return }
        playStarted = false
        camera.emit(StudioEvent(kind: .clipEnded, camera: camera.id, details: [
            "item": PlayerSpec.itemName(camera.playerSpec.items[current.item]), "item_number": "\(current.item + 1)",
            "duration_ms": "\(max(0, time - current.from) / 1_000_000)", "how": how,
        ]))
    }

    /// Pushes the sound whose time has come, stamped with that time.
    private mutating func pushSound(until now: UInt64) {
        while let first = sound.first, first.due <= now {
            sound.removeFirst()
            camera.sound.push(first.samples, capturedAt: first.due)
        }
    }

    private mutating func disconnectSound() {
        sound.removeAll()
        guard soundConnected else { return }
        camera.sound.disconnected()
        soundConnected = false
    }

    // MARK: Reading ahead and publishing

    private mutating func fill() {
        var pictures = queue.count { if case .picture = $0.content { true } else { false } }
        var decoded: UInt64 = 0
        defer { if decoded > 0 { camera.shared.withLock { $0.statistics.framesDecodedFull += decoded } } }
        while pictures < PlayerCamera.queuedPictures, queue.count < 512, !reader.isFinished, !camera.worker.isStopRequested {
            for entry in reader.readMore() {
                if case .picture = entry.content { (pictures, decoded) = (pictures + 1, decoded + 1) }
                // An item lasts until its last picture ends: its sound past that is not heard (a loop or
                // the next item follows there).
                if case .itemEnd = entry.content {
                    queue.removeAll { if case .audio = $0.content { $0.play == entry.play && $0.time >= entry.time } else { false } }
                }
                // In time order (a demuxer interleaves sound a little ahead of pictures), after entries of
                // the same time (an item's end before the next play's first picture).
                let index = queue.lastIndex { $0.time <= entry.time }.map { $0 + 1 } ?? 0
                queue.insert(entry, at: index)
            }
        }
    }

    /// The picture on screen and, playing, those in the queue, each with the tick it is shown from
    /// (`firstTick`; of two on one tick the later), the black after an end that shows black included.
    private mutating func publishSchedule() {
        publishEnding()
        guard let held else { return }
        guard state == .playing else {
            scheduledThrough = nil
            return camera.upcoming.replace(with: [PictureSchedule.Entry(from: 0, frame: held)])
        }
        let onScreen = lastTick >= 0 ? grid.time(ofFrame: lastTick) : 0
        var entries = [PictureSchedule.Entry(from: onScreen, frame: stamped(held, at: onScreen))]
        var placed = lastTick
        func place(_ frame: VideoFrame, at time: Int64) {
            let tick = max(lastTick + 1, firstTick(showing: time))
            if tick == placed, entries.count > 1 { entries.removeLast() }
            let from = grid.time(ofFrame: tick)
            entries.append(PictureSchedule.Entry(from: from, frame: stamped(frame, at: from)))
            placed = tick
        }
        for entry in queue {
            if case .picture(let frame) = entry.content {
                place(frame, at: entry.time)
                scheduledThrough = max(scheduledThrough ?? entry.time, entry.time)
            } else if case .itemEnd(let how, let isBlack) = entry.content, how == "end" || how == "truncated" {
                if isBlack { place(blackFrame(), at: entry.time) }
                break
            }
        }
        camera.upcoming.replace(with: entries)
    }

    /// With `end: cut-back`, playing: the program tick that shows the play's last picture (the one
    /// before its end is taken; the end read ahead, else the item's length), for the program to time
    /// its transition back by. Kept once ended; gone when cued or played again.
    private mutating func publishEnding() {
        if state == .playing, camera.playerSpec.end == .cutBack, let current {
            let end = queue.first { entry in
                if case .itemEnd = entry.content { entry.play == current.play } else { false }
            }?.time ?? current.length.map { current.start + $0 }
            ending = end.map { end in
                PictureSchedule.Ending(lastPicture: grid.time(ofFrame: firstTick(showing: end) - 1) + UInt64(interval / 2),
                                       transition: camera.playerSpec.endTransition)
            }
        } else if state != .ended {
            ending = nil
        }
        if camera.upcoming.ending != ending { camera.upcoming.ending = ending }
    }

    /// `frame`'s pixels as a new frame (sharing its storage) stamped `time`.
    private mutating func stamped(_ frame: VideoFrame, at time: UInt64) -> VideoFrame {
        sequence += 1
        return VideoFrame(format: frame.format, width: frame.width, height: frame.height, planes: frame.planes,
                          storage: frame.storage, captureTime: time, sequence: sequence)
    }

    /// The picture on screen again, stamped now (the same pixels: a new frame sharing its storage).
    private mutating func publishHeld(at now: UInt64) {
        guard let held else { return }
        camera.frames.publish(stamped(held, at: now))
        let format = CameraFormat(pixelFormat: held.format, width: held.width, height: held.height, frameRate: camera.rate)
        camera.shared.withLock {
            $0.statistics.framesCaptured += 1
            $0.statistics.lastFrameTime = now
            $0.state = .live
            $0.format = format
        }
    }

    private mutating func blackFrame() -> VideoFrame {
        let (width, height) = (held?.width ?? 320, held?.height ?? 180)
        if let black, black.width == width, black.height == height { return black }
        let frame = VideoFrame.allocate(format: .i420, width: width, height: height)
        memset(frame.plane(0), 16, frame.planes[0].byteCount)
        memset(frame.plane(1), 128, frame.planes[1].byteCount)
        memset(frame.plane(2), 128, frame.planes[2].byteCount)
        black = frame
        return frame
    }

    private func updateStatus() {
        let spec = camera.playerSpec
        let item = current?.item ?? reader.item
        let within = current.map { max(0, position - $0.start) } ?? 0
        let length = current?.length
        let status = PlayerStatus(item: PlayerSpec.itemName(spec.items[item]), itemNumber: item + 1, items: spec.items.map(PlayerSpec.itemName),
                                  state: state, positionMilliseconds: Int(within / 1_000_000),
                                  remainingMilliseconds: state == .ended ? 0 : length.map { Int(max(0, $0 - within) / 1_000_000) }, end: spec.end.rawValue,
                                  repeatedFrames: counts.repeated, skippedFrames: counts.skipped)
        camera.shared.withLock { $0.status = status }
    }
}
