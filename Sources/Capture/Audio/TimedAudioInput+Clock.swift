import Synchronization
import StudioCore
import StudioSystem

/// The clock side of a timed input: what runs on the thread that runs the program's `AudioClock` (an
/// `AudioInputSet`'s, or a standalone `PipeWireMicrophone`'s), reading the jitter buffer that the
/// backend fills.
extension TimedAudioInput {
    /// The clock's first sample (see `AudioClock.run`) and its origin (when sample 0 is due, on
    /// `clock`): the counters start over (what says which source is connected stays while it is).
    public func begin(first: Int64, origin: UInt64) {
        self.origin = origin
        let connected = isConnected
        counters.withLock { old in
            var fresh = AudioInputStatus(nextSample: first)
            if connected { (fresh.node, fresh.connections, fresh.streamState, fresh.defaultNode) = (old.node, old.connections, old.streamState, old.defaultNode) }
            old = fresh
        }
    }

    /// The clock's thread only: fills `chunk` from the jitter buffer through the resampler.
    public func fill(_ chunk: inout AudioChunk) {
        let count = chunk.frameCount, rate = Double(format.sampleRate)
        var underrun = false
        var aligned: Int64 = 0
        // How late this block is filled: its last frame was due at origin + end / rate (a wake-up
        // late by more than a block fills several; all but the last are late).
        let end = chunk.firstSample + Int64(count), now = clock.now()
        let due = origin &+ UInt64(max(0, Double(end) * 1e9 / rate))
        let lateness = now > due ? Double(now - due) / 1e9 : 0
        let (captured, target, discarded) = buffer.withLock { buffer -> (Int, Int, Int64) in
            defer { aligned = buffer.aligned }
            // The backend started a new stream since (`newStream`): the clock estimate starts over.
            if buffer.streamGeneration != streamSeen {
                streamSeen = buffer.streamGeneration
                loop.reset()
                arrivalRatio = nil
            }
            // The target grows by a quantum after each underrun (a machine too busy for the
            // smallest buffer), up to the most the jitter buffer may hold, and comes down again
            // after a calm stretch (`UnderrunHeadroom`).
            let target = AudioCapture.target(largestQuantum: buffer.largestQuantum, rate: format.sampleRate, block: blockFrames,
                                             headroom: buffer.headroom.extra)
            // Once a second (of program time), the source's clock from its arrivals.
            sinceArrivalCheck += count
            if sinceArrivalCheck >= format.sampleRate {
                sinceArrivalCheck = 0
                buffer.arrivals.closeSecond()
                arrivalRatio = buffer.arrivals.ratio
            }
            let sinceArrival = buffer.lastArrival > 0 && now > buffer.lastArrival ? Double(now - buffer.lastArrival) / 1e9 : 0
            guard let plan = loop.plan(ring: buffer.ring.frames, held: resampler.bufferedFrames, frames: count, lateness: lateness, sinceArrival: sinceArrival,
                                       target: target, quantum: buffer.lastQuantum, rate: rate) else {
                return (0, target, buffer.discarded)
            }
            if plan.started { resampler.reset() }
            // The last resort (a jump, a burst: counted), then the alignment after a start.
            buffer.ring.discard(frames: plan.jump + plan.burst)
            buffer.discarded += Int64(plan.jump + plan.burst)
            buffer.ring.discard(frames: plan.aligned)
            buffer.aligned += Int64(plan.aligned)
            let step = plan.step
            let needed = resampler.framesNeeded(toProduce: count, step: step)
            guard buffer.ring.frames >= needed else {
                // Last resort, the buffer ran dry (a stall, the source gone): silence, and fill again.
                loop.stop()
                underrun = true
                buffer.headroom.underrun(step: max(buffer.largestQuantum, format.sampleRate / 100))
                return (0, target, buffer.discarded)
            }
            // Straight from the ring into the resampler (one or two bulk copies).
            buffer.ring.read(frames: needed) { resampler.append($0) }
            resampler.produce(frames: count, step: step, into: &chunk.samples, offset: 0)
            _ = buffer.headroom.played(frames: count, left: buffer.ring.frames)
            return (count, target, buffer.discarded)
        }
        if underrun { silentSinceUnderrun = true }
        if captured > 0 { silentSinceUnderrun = false }
        let next = chunk.firstSample + Int64(count), linkedNow = isConnected, estimate = loop.estimator
        counters.withLock {
            $0.framesDelivered += Int64(count)
            $0.framesCaptured += Int64(captured)
            $0.nextSample = next
            $0.bufferTarget = target
            $0.bufferDelay = (Double(target) + Double(AdaptiveResampler.lookahead)) / rate
            $0.framesDiscarded = discarded
            $0.framesAligned = aligned
            $0.estimatedPPM = estimate.estimatedPPM
            $0.arrivalPPM = arrivalRatio.map { $0 * 1e6 }
            $0.compensationPPM = estimate.correctionPPM
            $0.bufferFill = estimate.fill ?? 0
            $0.bufferSeconds = estimate.fill.map { ($0 + Double(AdaptiveResampler.lookahead)) / rate } ?? 0
            if underrun { $0.underruns += 1 }
            // Silence while a connected source is not keeping up is inserted; silence while the source is gone is not.
            if captured == 0, silentSinceUnderrun, linkedNow { $0.framesInserted += Int64(count) }
            $0.state = captured > 0 ? "playing" : linkedNow ? "buffering" : "lost"
        }
    }

    /// The process stood still: what the buffer holds is from before the stall and would play late;
    /// capture starts over (a fresh jitter buffer) from the sample due now.
    public func stalled(_ silence: AudioChunk) {
        buffer.withLock { $0.ring.removeAll() }
        loop.stop()
        silentSinceUnderrun = false
        counters.withLock {
            $0.framesDelivered += Int64(silence.frameCount)
            $0.nextSample = silence.firstSample + Int64(silence.frameCount)
        }
    }
}
