#!/usr/bin/python3
"""A lossy link for the tests and benchmarks, where this host's kernel has no netem: a UDP relay on
loopback that loses, delays, jitters (and so reorders) datagrams in both directions.

    scripts/rig/udp-impair.py LISTEN_PORT TARGET_PORT [--loss 0.02] [--delay-ms 40] [--jitter-ms 5] [--seed 1]
                              [--burst-ms 0]

A sender aims at 127.0.0.1:LISTEN_PORT; every datagram goes to 127.0.0.1:TARGET_PORT from one socket
of the relay's, and what comes back goes to the last sender. Each direction loses `loss` of its
datagrams at random and holds the others `delay-ms` plus a uniform +-`jitter-ms` (so the round trip is
about twice the delay, and close datagrams can swap places). The queue is bounded (10000 datagrams a
direction; more are dropped and counted). With `--burst-ms N` datagrams leave only every N ms, all
that are due together and in order: a path (or a muxer) that delivers in bursts. On SIGTERM it prints its counts as one JSON line on stdout
and exits; a random seed makes a run repeatable.
"""
import argparse
import heapq
import json
import math
import random
import selectors
import signal
import socket
import sys
import time

BOUND = 10000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("listen_port", type=int)
    parser.add_argument("target_port", type=int)
    parser.add_argument("--loss", type=float, default=0.02)
    parser.add_argument("--delay-ms", type=float, default=40)
    parser.add_argument("--jitter-ms", type=float, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--burst-ms", type=float, default=0)
    options = parser.parse_args()
    if not 0 <= options.loss < 1 or options.delay_ms < 0 or not 0 <= options.jitter_ms <= options.delay_ms or options.burst_ms < 0:
        print("udp-impair: loss must be in [0, 1), delay >= 0, jitter in [0, delay] and burst >= 0", file=sys.stderr)
        sys.exit(2)
    rng = random.Random(options.seed)

    front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # faces the sender
    front.bind(("127.0.0.1", options.listen_port))
    back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)   # faces the target
    back.bind(("127.0.0.1", 0))
    target = ("127.0.0.1", options.target_port)
    for sock in (front, back):
        sock.setblocking(False)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)

    counts = {"forward": {"passed": 0, "lost": 0, "overflow": 0}, "back": {"passed": 0, "lost": 0, "overflow": 0}}
    pending = []  # (due, sequence, direction, bytes)
    waiting = {"forward": 0, "back": 0}
    sequence = 0
    sender = None
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))

    selector = selectors.DefaultSelector()
    selector.register(front, selectors.EVENT_READ, "forward")
    selector.register(back, selectors.EVENT_READ, "back")
    started = time.monotonic()
    burst = options.burst_ms / 1000
    print("udp-impair: 127.0.0.1:%d -> 127.0.0.1:%d, loss %.3f, delay %.0f ms +- %.0f ms, bursts every %.0f ms"
          % (options.listen_port, options.target_port, options.loss, options.delay_ms, options.jitter_ms, options.burst_ms), flush=True)

    while not stopping:
        now = time.monotonic()
        timeout = 0.2 if not pending else max(0.0, pending[0][0] - now)
        try:
            ready = selector.select(min(timeout, 0.2))
        except InterruptedError:
            continue
        for key, _ in ready:
            direction = key.data
            while True:
                try:
                    data, address = key.fileobj.recvfrom(65536)
                except (BlockingIOError, InterruptedError):
                    break
                if direction == "forward":
                    sender = address
                tally = counts[direction]
                if rng.random() < options.loss:
                    tally["lost"] += 1
                    continue
                if waiting[direction] >= BOUND:
                    tally["overflow"] += 1
                    continue
                due = time.monotonic() + (options.delay_ms + rng.uniform(-options.jitter_ms, options.jitter_ms)) / 1000
                if burst > 0:
                    due = started + math.ceil((due - started) / burst) * burst
                sequence += 1
                heapq.heappush(pending, (due, sequence, direction, data))
                waiting[direction] += 1
        now = time.monotonic()
        while pending and pending[0][0] <= now:
            _, _, direction, data = heapq.heappop(pending)
            waiting[direction] -= 1
            try:
                if direction == "forward":
                    back.sendto(data, target)
                elif sender is not None:
                    front.sendto(data, sender)
                counts[direction]["passed"] += 1
            except OSError:
                counts[direction]["overflow"] += 1
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main()
