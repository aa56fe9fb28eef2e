#!/usr/bin/python3
"""Measures the operator console's live pictures against a running `studio serve` (run by
scripts/bench-console.sh, which starts the server; see docs/benchmarks.md, issue 12).

Usage: bench-console.py URL PID SECONDS

Phases, each SECONDS long, on the server process PID (CPU: utime + stime of /proc/PID/stat):
  idle      no browser
  page      one headless chromium on the console page (4 camera tiles polled at up to 10 a second)
  latency   that page, which also fetches /api/v1/tiles/camN.jpg for every camera, each again 50-150 ms
            (at random: every phase of the tile thread's 100 ms rounds) after the last; for each answer: the picture's age at the server
            (X-Server-Time-Ns - X-Capture-Time-Ns, both the server's CLOCK_MONOTONIC) plus half the
            browser's measured round trip (request sent to body read), and the bound: age + whole trip
  browsers5 five headless chromium sessions on the console page
The program's late ticks (status program.late_ticks) are read before and after every phase.
Prints one JSON object.
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


def late_ticks():
    """Asked again on 429: the browsers share this address's request budget (100 a second)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{URL}/api/v1/status", timeout=10) as answer:
                return int(json.load(answer)["program"]["late_ticks"])
        except urllib.error.HTTPError as error:
            if error.code != 429 or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def measure(name, during=None):
    """CPU (% of one core) and late ticks over SECONDS; `during` runs meanwhile and returns extras."""
    late0, cpu0, t0 = late_ticks(), cpu_seconds(), time.monotonic()
    extra = during() if during else time.sleep(SECONDS)
    cpu1, t1 = cpu_seconds(), time.monotonic()
    result = {"cpu_percent": round(100 * (cpu1 - cpu0) / (t1 - t0), 2), "late_ticks": late_ticks() - late0,
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
const samples = [], end = performance.now() + seconds * 1000;
const pause = (ms) => new Promise(r => setTimeout(r, ms));
async function probe(camera) {
  while (performance.now() < end) {
    const sent = performance.now();
    const answer = await fetch(`/api/v1/tiles/${camera}.jpg?t=${Date.now()}`, {cache: 'no-store'});
    await answer.arrayBuffer();
    const read = performance.now();
    if (answer.status === 200)
      samples.push([camera, answer.headers.get('X-Capture-Time-Ns'), answer.headers.get('X-Server-Time-Ns'),
                    answer.headers.get('X-Tile-Sequence'), read - sent]);
    await pause(50 + 100 * Math.random());  // 10 a second on average, at every phase of the tile rounds
  }
}
Promise.all(cameras.map(probe)).then(() => done(samples), (e) => done(String(e)));"""


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
    samples = driver.execute_async_script(PROBE, SECONDS, CAMERAS)
    if not isinstance(samples, list) or not samples:
        raise SystemExit(json.dumps({"error": f"the latency probe got no pictures: {samples}"}))
    ages = [(int(server) - int(captured)) / 1e6 for _, captured, server, _, _ in samples]
    trips = [trip for *_, trip in samples]
    estimate = [age + trip / 2 for age, trip in zip(ages, trips)]
    bound = [age + trip for age, trip in zip(ages, trips)]
    distinct = len({(camera, sequence) for camera, _, _, sequence, _ in samples})
    summary = lambda values: {"median_ms": round(statistics.median(values), 1), "p95_ms": round(percentile(values, 95), 1),
                              "max_ms": round(max(values), 1)}
    return {"answers": len(samples), "distinct_pictures": distinct, "latency": summary(estimate),
            "latency_bound": summary(bound), "age_at_server": summary(ages), "round_trip": summary(trips)}


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
