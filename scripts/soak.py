"""Soak driver (issue 34), run by scripts/soak.sh: a real show for --hours, and the world around it.

It starts, each its own process ended by its PID: a private PipeWire daemon (deploy/pipewire-test.conf) with
two virtual cameras and a virtual microphone (pw-virtual-camera), a private nginx-rtmp (scripts/nginx-rtmp.sh)
on a free 127.0.0.1 port, and `studio serve` with three test-pattern cameras plus the PipeWire ones,
`--audio pipewire:all`, `--record` on the tmpfs soak.sh mounted, an RTMP output and the HTTP console on
127.0.0.1. During the show, each on its own schedule (seconds from the start, see SCHEDULE):
  cuts every few seconds, in turn `studio switch`, HTTP switch, `studio preview` + `studio auto`,
  `studio scene`, HTTP scene; a PipeWire camera and the microphone unplugged (SIGKILL) and back;
  nginx killed and started again; the database held under `BEGIN EXCLUSIVE` by another connection;
  the recording disk filled (the tmpfs shrunk to what it holds, the rest written) and freed; browsers:
  event-stream and tile-stream clients (curl) attached and gone; a second output added and removed,
  by the CLI and by HTTP. /proc/PID of the server sampled every SAMPLE_S seconds.
At the end (the server stopped with SIGINT): every cut the soak made is in `studio log --json` (kind
switch, same source, at or after the program time the reply gave, in order); every recording in
`studio recordings --json` exists and decodes (ffprobe -count_frames: frames, no error, also for a part the
full disk cut short: it is truncated to its last whole cluster);
RSS, threads and fds after the first minutes are flat (a least-squares slope per hour under the limits below,
or the last window no higher than minutes 5-10; see trend()).
Prints a summary; exit status 1 on any failure.
"""
import argparse, json, os, random, signal, socket, sqlite3, subprocess, sys, threading, time, urllib.request

SAMPLE_S = 10
WARMUP_S = 300          # "the first minutes": samples before this are the baseline, not the trend
RSS_SLOPE_MB_PER_H = 20  # flat: the trend after the warm-up must stay under these
THREADS_SLOPE_PER_H = 4
FDS_SLOPE_PER_H = 8
# name: (first at, every, how long) in seconds.
SCHEDULE = {
    "camera_unplug": (45, 120, 12),
    "mic_unplug": (75, 150, 10),
    "nginx_restart": (100, 240, 4),
    "db_lock": (130, 210, 15),
    "disk_full": (160, 270, 20),
    "browsers": (20, 90, 40),
    "second_output": (60, 180, 60),
}
CUT_EVERY_S = 4


def log(msg):
    print(f"soak {time.strftime('%H:%M:%S')} {msg}", flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_until(seconds, condition, step=0.1):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


class Soak:
    def __init__(self, args):
        self.args = args
        self.bin = args.bin
        self.work = args.work
        self.studio = os.path.join(self.bin, "studio")
        self.db = os.path.join(self.work, "soak.db")
        self.sock = os.path.join(self.work, "studio.sock")
        self.repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self.children = {}        # name -> Popen, everything this soak started and still runs
        self.failures = []
        self.cuts = []            # (source, program_ms, how)
        self.cut_errors = []
        self.counts = {}
        self.samples = []         # (t, rss_kb, threads, fds)
        self.lock = threading.Lock()
        run = os.path.join(self.work, "run")
        os.makedirs(run, mode=0o700, exist_ok=True)
        self.env = dict(os.environ, XDG_RUNTIME_DIR=run, PIPEWIRE_REMOTE=os.path.join(run, "pipewire-0"))
        self.env.pop("DBUS_SESSION_BUS_ADDRESS", None)

    def count(self, what):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    def fail(self, msg):
        log("FAIL " + msg)
        with self.lock:
            self.failures.append(msg)

    # ---- processes: started here, ended by PID

    def spawn(self, name, argv, env=None, new_session=False):
        out = open(os.path.join(self.work, f"{name}.log"), "ab")
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=env or self.env, start_new_session=new_session)
        out.close()
        self.children[name] = p
        return p

    def end(self, name, sig=signal.SIGTERM, grace=10):
        p = self.children.pop(name, None)
        if p is None:
            return None
        if p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                log(f"{name} (PID {p.pid}) did not stop within {grace} s: killed")
                p.kill()
                p.wait()
        return p.returncode

    def start_pipewire(self):
        self.spawn("pipewire", ["pipewire", "-c", os.path.join(self.repo, "deploy/pipewire-test.conf")])
        if not wait_until(10, lambda: os.path.exists(self.env["PIPEWIRE_REMOTE"])):
            raise SystemExit("soak: the PipeWire daemon did not start (see pipewire.log)")

    def start_producer(self, name, argv):
        log_path = os.path.join(self.work, f"{name}.log")
        size = os.path.getsize(log_path) if os.path.exists(log_path) else 0
        p = self.spawn(name, [os.path.join(self.bin, "pw-virtual-camera")] + argv)

        def ready():
            with open(log_path, "rb") as f:
                f.seek(size)
                return b"ready" in f.read()
        if not wait_until(10, lambda: ready() or p.poll() is not None) or p.poll() is not None:
            self.fail(f"{name} did not become ready (see {name}.log)")

    def start_camera(self, n):
        self.start_producer(f"vcam{n}", ["--node", f"vcam{n}", "--camera", f"pw{n}", "--size", "320x240", "--rate", "25",
                                         "--format", ["i420", "yuy2"][n % 2]])

    def start_mic(self):
        self.start_producer("vmic", ["--mic", "vmic", "--tone", "440"])

    def start_nginx(self):
        out = subprocess.run([os.path.join(self.repo, "scripts/nginx-rtmp.sh"), os.path.join(self.work, "nginx"), str(self.rtmp_port)],
                             capture_output=True, text=True, check=True)
        self.nginx_pid = int(out.stdout.split()[-1])

        def accepts():
            try:
                socket.create_connection(("127.0.0.1", self.rtmp_port), 0.5).close()
                return True
            except OSError:
                return False
        if not wait_until(10, accepts):
            self.fail("nginx-rtmp did not start")

    def stop_nginx(self):
        # nginx-rtmp.sh starts it in its own session (setsid); it is this soak's child's child: ended by PID.
        try:
            os.kill(self.nginx_pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        if not wait_until(10, lambda: not os.path.exists(f"/proc/{self.nginx_pid}")):
            os.kill(self.nginx_pid, signal.SIGKILL)

    # ---- the operator

    def cli(self, *argv, timeout=30):
        return subprocess.run([self.studio, *argv, "--socket", self.sock], capture_output=True, text=True, timeout=timeout)

    def http(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else (b"" if method == "POST" else None)
        req = urllib.request.Request(f"http://127.0.0.1:{self.http_port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError as e:
            return 0, str(e)

    def record_cut(self, how, ok, text):
        if not ok:
            self.cut_errors.append(f"{how}: {text.strip()[:200]}")
            return
        try:
            reply = json.loads(text)
            reply = reply.get("result", reply)
            self.cuts.append((reply["source"], reply["program_ms"], how))
        except (ValueError, KeyError) as e:
            self.fail(f"{how}: a cut's reply without source/program_ms: {text[:200]}")

    def program_source(self):
        status, text = self.http("GET", "/api/v1/status")
        try:
            return json.loads(text)["program"]["source"] if status == 200 else None
        except (ValueError, KeyError):
            return None

    def cut(self, turn):
        sources = ["cam1", "cam2", "cam3", "pw1", "pw2"] if turn % 5 == 1 else ["cam1", "cam2", "cam3"]
        current = self.program_source()
        choices = [s for s in sources if s != current]
        target = self.rng.choice(choices)
        scene = self.rng.choice([s for s in ["two", "pip"] if s != current] or ["two"])
        kind = turn % 5
        if kind == 0:
            r = self.cli("switch", target, "--json")
            self.record_cut("cli switch", r.returncode == 0, r.stdout if r.returncode == 0 else r.stderr)
        elif kind == 1:
            status, text = self.http("POST", "/api/v1/switch", {"source": target})
            self.record_cut("http switch", status == 200, text)
        elif kind == 2:
            r = self.cli("preview", target, "--json")
            if r.returncode != 0:
                self.cut_errors.append("cli preview: " + r.stderr.strip()[:200])
                return
            r = self.cli("auto", self.rng.choice(["mix", "wipe-left", "push-up", "dip"]), "--ms", "400", "--json")
            if r.returncode == 0:
                # The switch event comes on the transition's last frame: the program time it gives is later.
                reply = json.loads(r.stdout)
                reply = reply.get("result", reply)
                self.cuts.append((target, reply["program_ms"], "cli auto"))
            else:
                self.cut_errors.append("cli auto: " + r.stderr.strip()[:200])
        elif kind == 3:
            r = self.cli("scene", scene, "--json")
            self.record_cut("cli scene", r.returncode == 0, r.stdout if r.returncode == 0 else r.stderr)
        else:
            status, text = self.http("POST", f"/api/v1/scene/{scene}")
            self.record_cut("http scene", status == 200, text)

    # ---- the world

    def camera_unplug(self, phase):
        if phase == "start":
            self.end("vcam2", signal.SIGKILL)
        else:
            self.start_camera(2)

    def mic_unplug(self, phase):
        if phase == "start":
            self.end("vmic", signal.SIGKILL)
        else:
            self.start_mic()

    def nginx_restart(self, phase):
        if phase == "start":
            self.stop_nginx()
        else:
            self.start_nginx()

    def db_lock(self, phase):
        if phase == "start":
            # As an operator's `sqlite3 studio.db` would: another connection holding the whole file.
            self.locker = sqlite3.connect(self.db, timeout=5, isolation_level=None)
            self.locker.execute("BEGIN EXCLUSIVE")
        else:
            self.locker.execute("ROLLBACK")
            self.locker.close()

    def disk_full(self, phase):
        if not self.args.tmpfs:
            return
        record = self.args.record
        if phase == "start":
            st = os.statvfs(record)
            used_kb = (st.f_blocks - st.f_bfree) * st.f_frsize // 1024
            subprocess.run(["mount", "-o", f"remount,size={used_kb + 4096}k", record], check=True)
            with open(os.path.join(record, "filler"), "wb") as f:
                try:
                    while True:
                        f.write(b"\x5a" * 65536)
                        f.flush()
                except OSError:
                    pass
        else:
            os.remove(os.path.join(record, "filler"))
            subprocess.run(["mount", "-o", f"remount,size={os.environ.get('SOAK_DISK', '4g')}", record], check=True)

    def browsers(self, phase):
        base = f"http://127.0.0.1:{self.http_port}/api/v1"
        names = [f"browser{i}" for i in range(6)]
        if phase == "start":
            urls = [f"{base}/events", f"{base}/events", f"{base}/tiles/stream", f"{base}/tiles/stream?tiles=program,cam1",
                    f"{base}/tiles/program/stream", f"{base}/tiles/stream?tiles=pw1,two"]
            for name, url in zip(names, urls):
                self.spawn(name, ["curl", "-sN", "-o", "/dev/null", url], env=os.environ.copy())
        else:
            for name in names:
                self.end(name, signal.SIGKILL)

    def second_output(self, phase):
        url = f"rtmp://127.0.0.1:{self.rtmp_port}/live/second"
        by_http = self.counts.get("second_output", 0) % 2 == 0
        if phase == "start":
            if by_http:
                status, text = self.http("POST", "/api/v1/outputs/second/add", {"url": url})
                ok = status == 200
            else:
                r = self.cli("output", "add", "second", url)
                ok, text = r.returncode == 0, r.stderr
            if not ok:
                self.fail(f"output add second: {text.strip()[:200]}")
        else:
            if by_http:
                status, text = self.http("POST", "/api/v1/outputs/second/remove")
                ok = status == 200
            else:
                r = self.cli("output", "remove", "second")
                ok, text = r.returncode == 0, r.stderr
            if not ok:
                self.fail(f"output remove second: {text.strip()[:200]}")

    # ---- measurement

    def sample(self, t):
        pid = self.server.pid
        try:
            with open(f"/proc/{pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            rss = int(fields["VmRSS"].split()[0])
            threads = int(fields["Threads"])
            fds = len(os.listdir(f"/proc/{pid}/fd"))
            self.samples.append((t, rss, threads, fds))
        except (OSError, KeyError, ValueError) as e:
            self.fail(f"cannot sample /proc/{pid}: {e}")

    # ---- the run

    def run(self):
        self.rng = random.Random(34)
        self.rtmp_port, self.http_port = free_port(), free_port()
        self.start_pipewire()
        self.start_camera(1)
        self.start_camera(2)
        self.start_mic()
        self.start_nginx()
        config = os.path.join(self.work, "soak.yaml")
        with open(config, "w") as f:
            f.write("scenes:\n"
                    "  - { name: two, layout: side-by-side, sources: [cam1, cam2] }\n"
                    "  - { name: pip, layout: pip, sources: [cam3, pw1], corner: top-right, size: 0.3 }\n"
                    "cameras:\n  pins:\n"
                    "    - { name: pw1, match: vcam1 }\n"
                    "    - { name: pw2, match: vcam2 }\n")
        argv = [self.studio, "serve", "--config", config, "--cameras", "3", "--backends", "pipewire", "--camera-size", "320x240",
                "--audio", "pipewire:all", "--program", "640x360@25", "--preset", "veryfast", "--bitrate", "800k",
                "--iso-preset", "ultrafast", "--rtmp", f"rtmp://127.0.0.1:{self.rtmp_port}/live/${{SOAK_STREAM_KEY}}", "--record", self.args.record,
                "--db", self.db, "--socket", self.sock, "--http", f"127.0.0.1:{self.http_port}"]
        # The key from the environment, as docs/security.md asks (no warning about a key on the command line).
        self.server = self.spawn("studio", argv, env=dict(self.env, SOAK_STREAM_KEY="soak"))
        log(f"studio serve ({self.args.build} build) PID {self.server.pid}, HTTP {self.http_port}, RTMP {self.rtmp_port}, work {self.work}")
        if not wait_until(30, lambda: self.http("GET", "/api/v1/ping")[0] == 200 or self.server.poll() is not None) \
                or self.server.poll() is not None:
            raise SystemExit("soak: studio serve did not start (see studio.log)")
        if not wait_until(30, lambda: {"cam1", "pw1", "pw2"} <= set(self.camera_names())):
            self.fail(f"the PipeWire cameras did not appear: {self.camera_names()}")

        duration = self.args.hours * 3600
        start = time.monotonic()
        active = {}  # name -> end time of its current phase
        next_cut = next_sample = 0.0
        turn = 0
        while (t := time.monotonic() - start) < duration:
            if self.server.poll() is not None:
                self.fail(f"studio serve exited mid-show with status {self.server.returncode} after {t:.0f} s")
                break
            if t >= next_sample:
                self.sample(t)
                next_sample += SAMPLE_S
            for name, (first, every, hold) in SCHEDULE.items():
                if name in active:
                    if t >= active[name]:
                        self.act(name, "end")
                        del active[name]
                        self.count(name)
                elif t >= first and (t - first) % every < 1 and t + hold < duration:
                    self.act(name, "start")
                    active[name] = t + hold
            if t >= next_cut:
                try:
                    self.cut(turn)
                except Exception as e:
                    self.fail(f"cut {turn}: {e}")
                turn += 1
                next_cut += CUT_EVERY_S
                if len(self.cuts) % 50 == 0 and self.cuts:
                    log(f"{len(self.cuts)} cuts; {self.counts}; last sample {self.samples[-1] if self.samples else None}")
            time.sleep(0.2)
        for name in list(active):
            self.act(name, "end")
            self.count(name)
        self.sample(time.monotonic() - start)
        self.elapsed = time.monotonic() - start

    def act(self, name, phase):
        log(f"{name} {phase}")
        try:
            getattr(self, name)(phase)
        except Exception as e:
            self.fail(f"{name} {phase}: {e}")

    def camera_names(self):
        status, text = self.http("GET", "/api/v1/cameras")
        try:
            body = json.loads(text)
            cams = body.get("cameras", body) if isinstance(body, dict) else body
            return [c.get("name") for c in cams]
        except (ValueError, AttributeError, TypeError):
            return []

    # ---- the checks

    def stop_server(self):
        status = self.end("studio", signal.SIGINT, grace=60)
        if status != 0:
            self.fail(f"studio serve exited with status {status} on SIGINT")

    def check_history(self):
        r = subprocess.run([self.studio, "log", "--json", "--db", self.db, "--kind", "switch"], capture_output=True, text=True)
        if r.returncode != 0:
            self.fail(f"studio log: {r.stderr.strip()}")
            return
        body = json.loads(r.stdout)
        events = body["events"] if isinstance(body, dict) else body
        # A scene's switch names it in details.scene (camera null); a camera's in camera.
        switches = [((e.get("details") or {}).get("scene") or e.get("camera"), e.get("program_ms", 0)) for e in events]
        self.switch_events = len(switches)
        i = 0
        lost = []
        for source, ms, how in self.cuts:
            j = i
            while j < len(switches) and not (switches[j][0] == source and switches[j][1] >= ms - 1):
                j += 1
            if j == len(switches):
                lost.append((source, ms, how))
            else:
                i = j + 1
        if lost:
            self.fail(f"{len(lost)} of {len(self.cuts)} cuts not in the history, first {lost[:5]}")
        self.lost_cuts = len(lost)

    def check_recordings(self):
        r = subprocess.run([self.studio, "recordings", "--json", "--db", self.db], capture_output=True, text=True)
        if r.returncode != 0:
            self.fail(f"studio recordings: {r.stderr.strip()}")
            return
        body = json.loads(r.stdout)
        files = body.get("recordings", body) if isinstance(body, dict) else body
        # A file the full disk cut short is truncated to its last whole cluster (guarantees.md), so it
        # decodes like any other: no error allowed on any file. Those files are counted apart.
        r = subprocess.run([self.studio, "log", "--json", "--db", self.db, "--kind", "recording_stopped"], capture_output=True, text=True)
        cut_short = {(e.get("details") or {}).get("path") for e in json.loads(r.stdout)["events"]
                     if (e.get("details") or {}).get("error")} if r.returncode == 0 else set()
        self.recordings = []
        for entry in files:
            path = entry.get("path") if isinstance(entry, dict) else entry
            if not path or not os.path.exists(path):
                self.fail(f"recording listed but missing: {entry}")
                continue
            # Decodes every video frame (-count_frames): the decode check and the frame count in one pass.
            p = subprocess.run(["ffprobe", "-v", "error", "-threads", "1", "-count_frames", "-select_streams", "v:0",
                                "-show_entries", "stream=nb_read_frames:format=duration", "-of", "json", path],
                               capture_output=True, text=True)
            errors = [line for line in p.stderr.splitlines() if line.strip()]
            try:
                info = json.loads(p.stdout)
                frames = int(info["streams"][0]["nb_read_frames"])
                duration = float(info["format"].get("duration", "nan"))
            except (ValueError, KeyError, IndexError):
                frames, duration = 0, float("nan")
            truncated = path in cut_short
            if p.returncode != 0 or frames == 0 or errors:
                self.fail(f"recording {path} does not play: {frames} frames, {' | '.join(errors)[:300]}")
            self.recordings.append((os.path.basename(path), os.path.getsize(path), duration, frames, truncated))

    def trend(self):
        late = [s for s in self.samples if s[0] >= WARMUP_S]
        first = [s for s in self.samples if s[0] < WARMUP_S]
        out = {}
        for k, name, limit in [(1, "rss_kb", RSS_SLOPE_MB_PER_H * 1024), (2, "threads", THREADS_SLOPE_PER_H), (3, "fds", FDS_SLOPE_PER_H)]:
            if len(late) < 10:
                out[name] = None
                continue
            xs = [s[0] / 3600 for s in late]
            ys = [s[k] for s in late]
            mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
            slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
            tail = [s[k] for s in self.samples if s[0] >= self.samples[-1][0] - WARMUP_S]
            head = [s[k] for s in first] or ys[:1]
            out[name] = (sum(head) / len(head), max(head), sum(tail) / len(tail), max(tail), slope)
            # Browsers, outputs and cameras come and go, so threads and fds swing by a few around the trend and a
            # half-hour's slope alone is noisy: it is growth when the slope is over the limit and the last
            # window's lowest is above the highest of the first window after the warm-up.
            settled = [s[k] for s in late if s[0] < 2 * WARMUP_S]
            if slope > limit and min(tail) > max(settled):
                self.fail(f"{name} grows: {slope:.1f} per hour after the first {WARMUP_S // 60} minutes (limit {limit}), "
                          f"lowest of the last {WARMUP_S // 60} minutes {min(tail)} > highest of minutes 5-10 {max(settled)}")
        return out

    def summary(self, trend):
        print("\n== soak summary ==")
        print(f"ran {self.elapsed / 3600:.2f} h ({self.args.build} build); cuts made {len(self.cuts)}, refused {len(self.cut_errors)}; "
              f"switch events in the history {getattr(self, 'switch_events', '?')}, cuts missing {getattr(self, 'lost_cuts', '?')}")
        print("disturbances:", ", ".join(f"{k} x{v}" for k, v in sorted(self.counts.items())))
        for err in self.cut_errors[:5]:
            print("  refused:", err)
        recordings = getattr(self, "recordings", [])
        print(f"recordings {len(recordings)}, {sum(r[3] for r in recordings)} video frames decoded, "
              f"{sum(1 for r in recordings if r[4])} cut short by the full disk (play up to the cut)")
        for name, size, duration, frames, truncated in recordings:
            print(f"  {name}: {size / 1e6:.1f} MB, {duration:.1f} s, {frames} frames{', cut short by the full disk' if truncated else ''}")
        for name, v in trend.items():
            if v is None:
                print(f"  {name}: too few samples after the warm-up for a trend")
            else:
                unit = 1024 if name == "rss_kb" else 1
                label = "RSS MiB" if name == "rss_kb" else name
                print(f"  {label}: first {WARMUP_S // 60} min mean {v[0] / unit:.1f} (max {v[1] / unit:.1f}), "
                      f"last {WARMUP_S // 60} min mean {v[2] / unit:.1f} (max {v[3] / unit:.1f}), slope after warm-up {v[4] / unit:+.2f}/h")
        with open(os.path.join(self.work, "samples.csv"), "w") as f:
            f.write("t_s,rss_kb,threads,fds\n" + "".join(f"{t:.0f},{r},{th},{fd}\n" for t, r, th, fd in self.samples))
        print("FAILED:" if self.failures else "PASSED", *[f"\n  - {m}" for m in self.failures])

    def cleanup(self):
        if getattr(self, "locker", None):
            try:
                self.locker.close()
            except sqlite3.Error:
                pass
        for name in list(self.children):
            self.end(name, signal.SIGKILL if name != "studio" else signal.SIGINT)
        if getattr(self, "nginx_pid", None):
            self.stop_nginx()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hours", type=float, required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--tmpfs", type=int, default=0)
    ap.add_argument("--build", default="debug")
    soak = Soak(ap.parse_args())
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        soak.run()
        soak.stop_server()
        soak.check_history()
        soak.check_recordings()
        soak.summary(soak.trend())
    finally:
        soak.cleanup()
    sys.exit(1 if soak.failures else 0)


if __name__ == "__main__":
    main()
