#!/usr/bin/python3
"""Measures the operator console's live pictures against a running `studio serve` (run by
scripts/bench-console.sh, which starts the server; see docs/benchmarks.md, issue 12).

Usage: bench-console.py URL PID SECONDS

Phases, each SECONDS long, on the server process PID (CPU: utime + stime of /proc/PID/stat; the tile
thread's own CPU: studio_tile_cpu_seconds_total from /metrics):
  idle      no browser
  page      one headless chromium on the console page (every tile, 4 cameras, program and preview and
            the scenes, on its one multiplexed stream, up to 10 pictures a second each)
  latency   that page, which also reads its own /api/v1/tiles/stream?tiles=cam1,...,cam4 with fetch();
            for each part: the picture's age as it left (X-Server-Time-Ns - X-Capture-Time-Ns, both the
            server's CLOCK_MONOTONIC) plus its time on the way (arrival in the browser - X-Server-Time-Ns,
            two clocks: less the smallest such difference of the run, plus half the median round trip of
            small requests measured before), and the bound: the same plus the whole round trip
  browsers5 five headless chromium sessions on the console page
The program's late ticks (status program.late_ticks) and the tile requests (studio_http_tile_requests_total)
are read before and after every phase. Prints one JSON object.
"""
import json
import os
import statistics
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

URL, PID, SECONDS = sys.argv[1].rstrip("/"), int(sys.argv[2]), float(sys.argv[3])
CAMERAS = ["cam1", "cam2", "cam3", "cam4"]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds():
    with open(f"/proc/{PID}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15)


def get(path):
    """Asked again on 429: the browsers share this address's request budget (100 a second)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{URL}{path}", timeout=10) as answer:
                return answer.read().decode()
        except urllib.error.HTTPError as error:
            if error.code != 429 or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def late_ticks():
    return int(json.loads(get("/api/v1/status"))["program"]["late_ticks"])


def metric(prefix):
    """The sum of the samples of the metric family whose lines start with `prefix`."""
    return sum(float(line.split()[-1]) for line in get("/metrics").splitlines() if line.startswith(prefix))


def measure(name, during=None):
    """CPU (% of one core; the tile thread's too), late ticks and tile requests over SECONDS; `during`
    runs meanwhile and returns extras."""
    late0, tile0, requests0 = late_ticks(), metric("studio_tile_cpu_seconds_total"), metric("studio_http_tile_requests_total{")
    cpu0, t0 = cpu_seconds(), time.monotonic()
    extra = during() if during else time.sleep(SECONDS)
    cpu1, t1 = cpu_seconds(), time.monotonic()
    tile1 = metric("studio_tile_cpu_seconds_total")
    result = {"cpu_percent": round(100 * (cpu1 - cpu0) / (t1 - t0), 2), "tile_thread_cpu_percent": round(100 * (tile1 - tile0) / (t1 - t0), 2),
              "late_ticks": late_ticks() - late0, "tile_requests": int(metric("studio_http_tile_requests_total{") - requests0),
              "seconds": round(t1 - t0, 1)}
    if extra:
        result.update(extra)
    results[name] = result


def wait(description, condition, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except Exception:  # the page is still building its tiles
            pass
        time.sleep(0.1)
    raise SystemExit(json.dumps({"error": f"timed out waiting for {description}"}))


LIVE = """return [...arguments[0]].every(c => { const i = document.querySelector(`#tiles [data-camera="${c}"] img`);
  return i && i.complete && i.naturalWidth > 0; })"""
COUNT_LOADS = """window.tileLoads = 0;
for (const img of document.querySelectorAll('#tiles [data-camera] img')) img.addEventListener('load', () => window.tileLoads++);"""
PROBE = """const [seconds, cameras, done] = arguments;
const samples = [], trips = [];
async function run() {
  // The round trip of small requests, first (no pictures in them).
  for (let i = 0; i < 20; i++) {
    const sent = performance.now();
    const answer = await fetch('/api/v1/levels', {cache: 'no-store'});
    await answer.arrayBuffer();
    if (answer.ok) trips.push(performance.now() - sent);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // The page's own reader of the tile stream (console.js), on a stream of the cameras' tiles.
  const controller = new AbortController();
  setTimeout(() => controller.abort(), seconds * 1000);
  let response;
  for (;;) {  // asked again on 429: the round trips above spent some of the address's budget
    response = await fetch(`/api/v1/tiles/stream?tiles=${cameras.join(',')}`, {cache: 'no-store', signal: controller.signal});
    if (response.ok) break;
    if (response.status !== 429) throw new Error(`the tile stream: ${response.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // Arrival on the browser's clock (ms since its epoch, with sub-ms precision).
  await readParts(response.body.getReader(), (fields) => samples.push([fields['x-tile'], fields['x-capture-time-ns'],
    fields['x-server-time-ns'], fields['x-tile-sequence'], performance.timeOrigin + performance.now()])).catch(() => {});
  controller.abort();
}
run().then(() => done([samples, trips]), (e) => done(String(e)));"""


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(SECONDS + 60)
    driver.get(URL + "/")
    wait("every camera tile to show a picture", lambda: driver.execute_script(LIVE, CAMERAS))
    driver.execute_script(COUNT_LOADS)
    return driver


def tile_rate(drivers, during):
    """Runs `during`, and gives the camera tiles' pictures a second each page showed meanwhile."""
    before = [d.execute_script("return window.tileLoads") for d in drivers]
    t0 = time.monotonic()
    extra = during() or {}
    elapsed = time.monotonic() - t0
    after = [d.execute_script("return window.tileLoads") for d in drivers]
    extra["tile_pictures_per_s_per_page"] = [round((a - b) / elapsed, 1) for a, b in zip(after, before)]
    return extra


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def latency(driver):
    probe = driver.execute_async_script(PROBE, SECONDS, CAMERAS)
    if not isinstance(probe, list) or not probe[0]:
        raise SystemExit(json.dumps({"error": f"the latency probe got no pictures: {probe}"}))
    samples, trips = probe
    ages = [(int(server) - int(captured)) / 1e6 for _, captured, server, _, _ in samples]
    # Arrival (browser clock) - leaving (server clock): the clocks' offset plus the time on the way; the
    # smallest of the run is taken as the offset plus the quickest way, which half the round trip stands for.
    ways = [arrived - int(server) / 1e6 for _, _, server, _, arrived in samples]
    quickest, trip = min(ways), statistics.median(trips)
    on_the_way = [way - quickest + trip / 2 for way in ways]
    estimate = [age + way for age, way in zip(ages, on_the_way)]
    bound = [age + way + trip / 2 for age, way in zip(ages, on_the_way)]
    distinct = len({(camera, sequence) for camera, _, _, sequence, _ in samples})
    summary = lambda values: {"median_ms": round(statistics.median(values), 1), "p95_ms": round(percentile(values, 95), 1),
                              "max_ms": round(max(values), 1)}
    return {"answers": len(samples), "distinct_pictures": distinct, "latency": summary(estimate),
            "latency_bound": summary(bound), "age_at_server": summary(ages), "on_the_way": summary(on_the_way),
            "round_trip": summary(trips)}


results = {}
drivers = []
try:
    measure("idle")
    drivers.append(browser())
    measure("page", lambda: tile_rate(drivers, lambda: time.sleep(SECONDS)))
    measure("latency", lambda: tile_rate(drivers, lambda: latency(drivers[0])))
    while len(drivers) < 5:
        drivers.append(browser())
    measure("browsers5", lambda: tile_rate(drivers, lambda: time.sleep(SECONDS)))
finally:
    for driver in drivers:
        driver.quit()
print(json.dumps(results))
