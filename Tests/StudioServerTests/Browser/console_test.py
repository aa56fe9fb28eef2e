#!/usr/bin/python3
"""Drives the operator's console in headless chromium (Debian's chromium + chromium-driver, Selenium).

Usage: console_test.py URL SCREENSHOT.png [SCENE]
       console_test.py --lost CAMERA URL READY_FILE
       console_test.py --history SESSION URL SCREENSHOT.png
       console_test.py --player NAME URL SCREENSHOT.png
       console_test.py --tally CAMERA URL READY_FILE
Run by BrowserConsoleTests (Tests/StudioServerTests), which starts the real server and checks what this
reports, on stdout, as one JSON object.

--lost: once every tile is live, creates READY_FILE and waits for CAMERA's tile to turn
data-state="lost" (the test unplugs the camera after READY_FILE appears); reports
  lost_at_ms                    when the tile turned lost (wall time, ms since the epoch, in the page)

--history: clicks SESSION in the History panel and waits for its timeline and its events; reports
  sessions                      the session ids the panel lists, in order
  session_loudness: {id: LUFS}  each listed session's data-integrated-lufs (null where it has none)
  program_sources               data-source of the timeline's program-lane rects, in order
  event_kinds                   data-kind of the event table's rows, in order

--player: waits for player NAME's row under the tiles and the countdown on its tile, clicks the row's
play, and waits for the countdown to run down by a second; reports
  cued: {item, state, remaining, countdown}   the row's fields and the tile's countdown before play
  playing: [before, after]      the countdown once the row says playing, and a second later

--tally (a node of cam1 and cam2 following its switcher): once CAMERA's tile is on program and the
other's not, creates READY_FILE and waits for the reverse (the test switches the switcher); reports
  flipped_at_ms                 when the page showed the other camera on program (ms since the epoch)

Otherwise:
  colours: {camera: [r, g, b]}  the mean colour of each camera tile's ident block, read from the <img>'s
                                pixels through a canvas (the Swift test names the camera it shows)
  scene_halves: [[r,g,b], [r,g,b]]    with SCENE (cam1 stretched over the left half, cam2 over the
                                right): the mean colour where each half shows its camera's ident block,
                                once they read as cam1's and cam2's tile colours
  preview_halves                the same, read from the preview tile after SCENE's PVW button
  tile_requests: [before, after]  studio_http_tile_requests_total (all routes, from /metrics) once
                                every tile shows a picture, and 3 s later
  tile_parts: [before, after]   the pictures the page received (its body's data-tile-parts) then
  tally_after_cut               cam2's data-tally after clicking its tile, then Cut
  preview_tally                 cam2's data-tally after clicking its tile (before Cut)
  cursor                        whether clicking cam2's picture drew the focus cursor
  focus_point: [x, y]           the point the page sent (0..1), read back from the panel
  focus_method                  what the camera could do, as the panel shows it
  cut_clicked_ms                wall time of the Cut click (ms since the epoch)
  meter_peak_dbfs: [l, r]       the program audio meter's data-peak-dbfs once it reads above the floor
  input_peak_dbfs: [l, r]       the `tone` input's meter (data-meter="tone") once it reads above the floor
  input_rms_dbfs: [l, r]        that meter's data-rms-dbfs at the same moment
  loudness: {field: value}      the loudness readout's data-value per field (momentary_lufs, short_term_lufs,
                                integrated_lufs, range_lu, true_peak_dbtp; null where it shows none) once
                                M, S, I and true peak show a reading, before the mute
  api_loudness: {field: value}  /api/v1/audio's program readings fetched right after
  input_muted                   that input's mute button's aria-pressed after clicking it
  silent_momentary              true once the loudness readout's momentary shows none after the mute (the
                                program is silence: no reading, not a number of -2000 LUFS)
  follow_choices                that input's follow menu's options
  input_follow                  the follow menu's value once the server's answer to choosing cam2 came back
Exits 2 with a message when a step does not happen in time; says on stderr how long each wait took.
"""
import json
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.support.ui import Select

LOST = sys.argv[2] if sys.argv[1] == "--lost" else None
HISTORY = sys.argv[2] if sys.argv[1] == "--history" else None
PLAYER = sys.argv[2] if sys.argv[1] == "--player" else None
TALLY = sys.argv[2] if sys.argv[1] == "--tally" else None
URL, OUTPUT = (sys.argv[3], sys.argv[4]) if LOST or HISTORY or PLAYER or TALLY else (sys.argv[1], sys.argv[2])
SCENE = sys.argv[3] if not LOST and not HISTORY and not PLAYER and not TALLY and len(sys.argv) > 3 else None
CAMERAS = ["cam1", "cam2", "cam3"]


def fail(message):
    print(json.dumps({"error": message}))
    sys.exit(2)


def wait(description, condition, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            value = condition()
        except Exception:  # the element is not there yet, or was replaced
            value = None
        if value:
            print(f"waited {seconds - (deadline - time.monotonic()):.2f} s for {description}", file=sys.stderr)
            return value
        time.sleep(0.05)
    fail(f"timed out waiting for {description}")


def audio_route():
    """The server's own answer, GET /api/v1/audio, to compare the page with."""
    return json.loads(urllib.request.urlopen(URL.rstrip("/") + "/api/v1/audio", timeout=10).read().decode())


options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
result = {}
try:
    driver.get(URL)
    if HISTORY:
        button = lambda: driver.find_element(By.CSS_SELECTOR, f'#history-sessions button[data-session="{HISTORY}"]')
        wait(f"session {HISTORY} in the History panel", button)
        result["sessions"] = [int(b.get_attribute("data-session")) for b in driver.find_elements(By.CSS_SELECTOR, "#history-sessions button")]
        result["session_loudness"] = {b.get_attribute("data-session"): float(b.get_attribute("data-integrated-lufs")) if b.get_attribute("data-integrated-lufs") else None
                                      for b in driver.find_elements(By.CSS_SELECTOR, "#history-sessions button")}
        button().click()
        rects = lambda: driver.find_elements(By.CSS_SELECTOR, '#history-timeline svg rect[data-lane="program"]')
        wait("the session's timeline", rects)
        wait("the session's events", lambda: driver.find_elements(By.CSS_SELECTOR, "#history-events tr[data-kind]"))
        result["program_sources"] = [r.get_attribute("data-source") for r in rects()]
        result["event_kinds"] = [r.get_attribute("data-kind") for r in driver.find_elements(By.CSS_SELECTOR, "#history-events tr[data-kind]")]
        driver.execute_script("document.getElementById('history').scrollIntoView()")
        driver.save_screenshot(OUTPUT)
        print(json.dumps(result))
        sys.exit(0)
    if PLAYER:
        row = lambda: driver.find_element(By.CSS_SELECTOR, f'#players tr[data-player="{PLAYER}"]')
        field = lambda name: row().find_element(By.CSS_SELECTOR, f'[data-field="{name}"]').text
        countdown = lambda: driver.find_element(By.CSS_SELECTOR, f'#tiles [data-camera="{PLAYER}"] .countdown').text
        seconds = lambda text: int(text.lstrip("-").split(":")[0]) * 60 + float(text.lstrip("-").split(":")[1])
        wait(f"{PLAYER}'s row and countdown", lambda: row().is_displayed() and countdown())
        result["cued"] = {"item": field("item"), "state": field("state"), "remaining": field("remaining"), "countdown": countdown()}
        row().find_element(By.CSS_SELECTOR, '[data-action="player-play"]').click()
        wait(f"{PLAYER} to play", lambda: field("state") == "playing")
        before = countdown()
        after = wait("the countdown to run down a second", lambda: (lambda now: now if seconds(now) <= seconds(before) - 1 else None)(countdown()))
        result["playing"] = [before, after]
        driver.save_screenshot(OUTPUT)
        print(json.dumps(result))
        sys.exit(0)
    tile = lambda camera: driver.find_element(By.CSS_SELECTOR, f'#tiles [data-camera="{camera}"]')

    if TALLY:
        other = "cam1" if TALLY == "cam2" else "cam2"
        lit = lambda on, off: tile(on).get_attribute("data-tally") == "program" and tile(off).get_attribute("data-tally") == "none"
        wait(f"{TALLY}'s tile on program and {other}'s not", lambda: lit(TALLY, other), seconds=30)
        open(OUTPUT, "w").close()
        wait(f"{other}'s tile on program and {TALLY}'s not", lambda: lit(other, TALLY), seconds=30)
        result["flipped_at_ms"] = driver.execute_script("return Date.now()")
        print(json.dumps(result))
        sys.exit(0)

    # Every camera's tile, live, with a picture shown.
    for camera in CAMERAS:
        wait(f"{camera}'s tile to show a picture", lambda: tile(camera).get_attribute("data-state") == "live"
             and driver.execute_script("const i = arguments[0].querySelector('img'); return i.complete && i.naturalWidth > 0", tile(camera)))

    if LOST:
        # The page notes the moment the tile turns lost; then the test may unplug the camera.
        driver.execute_script("""
            const tile = arguments[0];
            new MutationObserver(() => {
                if (tile.dataset.state === 'lost' && !window.lostAt) window.lostAt = Date.now();
            }).observe(tile, { attributes: true, attributeFilter: ['data-state'] });
        """, tile(LOST))
        open(OUTPUT, "w").close()
        result["lost_at_ms"] = wait(f"{LOST}'s tile to turn lost", lambda: driver.execute_script("return window.lostAt || null"), seconds=30)
        print(json.dumps(result))
        sys.exit(0)

    # Mean colours of parts of a tile's picture, read from its <img> through a canvas of WIDTH x HEIGHT:
    # each part [first column, last column, first row, last row]. The tile's next picture comes all the
    # time: null while the <img> is between two (then it draws nothing), so callers wait for one.
    read_means = """
        const [figure, width, height, parts] = arguments;
        const img = figure.querySelector('img');
        if (!img.complete || img.naturalWidth === 0) return null;
        const canvas = document.createElement('canvas');
        canvas.width = width; canvas.height = height;
        const context = canvas.getContext('2d');
        context.drawImage(img, 0, 0, width, height);
        const data = context.getImageData(0, 0, width, height).data;
        const means = [];
        for (const [left, right, top, bottom] of parts) {
            const sums = [0, 0, 0]; let count = 0;
            for (let row = top; row <= bottom; row++) for (let column = left; column <= right; column++) {
                const i = (row * width + column) * 4;
                if (data[i + 3] !== 255) return null;
                sums[0] += data[i]; sums[1] += data[i + 1]; sums[2] += data[i + 2]; count++;
            }
            means.push(sums.map((sum) => Math.round(sum / count)));
        }
        return means;
    """
    # Each tile's ident block (the test pattern's left quarter), sampled as EndToEndTests samples a 16x9
    # thumbnail: columns 1-2, rows 2-6.
    read_ident = lambda figure: (driver.execute_script(read_means, figure, 16, 9, [[1, 2, 2, 6]]) or [None])[0]
    result["colours"] = {camera: wait(f"{camera}'s picture to read", lambda: read_ident(tile(camera)))
                         for camera in CAMERAS}

    # The pictures come over one stream: the page's tile requests do not grow with its pictures.
    def tile_requests():
        text = urllib.request.urlopen(URL.rstrip("/") + "/metrics", timeout=10).read().decode()
        return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith("studio_http_tile_requests_total{"))
    parts = lambda: int(driver.execute_script("return document.body.dataset.tileParts || '0'"))
    before = (tile_requests(), parts())
    time.sleep(3)  # a stretch of the page's life: about 10 pictures a second per tile
    result["tile_requests"] = [before[0], tile_requests()]
    result["tile_parts"] = [before[1], parts()]

    if SCENE:
        # Each half of a picture where it shows its camera's ident block (the left quarter of the
        # camera, stretched into half the width): columns 2-5 and 34-37 of 64, rows 4-12 of 18.
        read_halves = lambda figure: driver.execute_script(read_means, figure, 64, 18, [[2, 5, 4, 12], [34, 37, 4, 12]])
        near = lambda a, b: sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5 < 60
        def halves(element):
            read = read_halves(element)
            return read if read and near(read[0], result["colours"]["cam1"]) and near(read[1], result["colours"]["cam2"]) else None
        scene_tile = lambda: driver.find_element(By.CSS_SELECTOR, f'#tiles [data-scene="{SCENE}"]')
        result["scene_halves"] = wait(f"{SCENE}'s tile to show cam1 left and cam2 right", lambda: halves(scene_tile()))
        scene_tile().find_element(By.CSS_SELECTOR, '[data-action="preview"]').click()
        preview = lambda: driver.find_element(By.CSS_SELECTOR, '[data-role="preview"]')
        wait(f"{SCENE} on preview", lambda: scene_tile().get_attribute("data-tally") == "preview")
        result["preview_halves"] = wait(f"the preview tile to show {SCENE}", lambda: halves(preview()))

    # Click cam2's tile (its name: a click on the picture of the selected camera focuses instead):
    # preview; then Cut: program.
    tile("cam2").find_element(By.CSS_SELECTOR, ".name").click()
    result["preview_tally"] = wait("cam2 on preview", lambda: tile("cam2").get_attribute("data-tally") == "preview" and "preview")
    result["cut_clicked_ms"] = int(time.time() * 1000)
    driver.find_element(By.CSS_SELECTOR, '#switching [data-action="cut"]').click()
    result["tally_after_cut"] = wait("cam2 on program", lambda: tile("cam2").get_attribute("data-tally") == "program" and "program")

    # The focus cursor: cam2 is the selected camera now; click its picture at 30 % across, 60 % down.
    wait("cam2 selected", lambda: driver.find_element(By.ID, "selected-camera").text == "cam2")
    img = tile("cam2").find_element(By.TAG_NAME, "img")
    size = img.size
    ActionChains(driver).move_to_element_with_offset(img, int(size["width"] * (0.3 - 0.5)), int(size["height"] * (0.6 - 0.5))).click().perform()
    result["cursor"] = len(tile("cam2").find_elements(By.CSS_SELECTOR, '[data-role="focus-cursor"]')) == 1
    panel = driver.find_element(By.ID, "focus-result")
    result["focus_method"] = wait("the focus reply", lambda: panel.get_attribute("data-method"))
    result["focus_point"] = [float(panel.get_attribute("data-x")), float(panel.get_attribute("data-y"))]

    # The program audio meter: the page polls the levels; its data-peak-dbfs="L,R" leaves the floor (-96).
    def meter_peaks():
        peaks = [float(v) for v in driver.find_element(By.CSS_SELECTOR, '[data-meter="program"]').get_attribute("data-peak-dbfs").split(",")]
        return peaks if len(peaks) == 2 and all(p > -96 for p in peaks) else None
    result["meter_peak_dbfs"] = wait("the audio meter", meter_peaks)

    # The mixer's inputs: a meter per input (the demo's `tone`) with its mute button.
    def input_peaks():
        rows = driver.find_elements(By.CSS_SELECTOR, '#audio-inputs [data-meter="tone"]')
        if not rows or not rows[0].get_attribute("data-peak-dbfs"):
            return None
        peaks = [float(v) for v in rows[0].get_attribute("data-peak-dbfs").split(",")]
        return peaks if len(peaks) == 2 and all(p > -96 for p in peaks) else None
    result["input_peak_dbfs"] = wait("the tone input's meter", input_peaks)
    result["input_rms_dbfs"] = [float(v) for v in driver.find_element(
        By.CSS_SELECTOR, '#audio-inputs [data-meter="tone"]').get_attribute("data-rms-dbfs").split(",")]

    # The program's loudness beside the meter: M, S, I and true peak show readings once the short-term
    # window has 3 s of audio; then the same fields from the API, for the test to compare.
    fields = ["momentary_lufs", "short_term_lufs", "integrated_lufs", "range_lu", "true_peak_dbtp"]
    def loudness():
        shown = {f: driver.find_element(By.CSS_SELECTOR, f'#loudness [data-field="{f}"]').get_attribute("data-value") for f in fields}
        if any(not shown[f] for f in ["momentary_lufs", "short_term_lufs", "integrated_lufs", "true_peak_dbtp"]):
            return None
        return {f: float(v) if v else None for f, v in shown.items()}
    result["loudness"] = wait("the loudness readout", loudness)
    program = audio_route()["program"]
    result["api_loudness"] = {f: program.get(f) for f in fields}
    driver.find_element(By.CSS_SELECTOR, '#audio-inputs [data-meter="tone"] [data-action="mute"]').click()
    result["input_muted"] = wait("the mute button to say muted", lambda: driver.find_element(
        By.CSS_SELECTOR, '#audio-inputs [data-meter="tone"] [data-action="mute"]').get_attribute("aria-pressed") == "true" or None)

    result["silent_momentary"] = wait("the momentary loudness to show none", lambda: driver.find_element(
        By.CSS_SELECTOR, '#loudness [data-field="momentary_lufs"]').get_attribute("data-value") == "" or None)

    # Audio-follow-video from the row: its menu lists none, the cameras and the scenes; choosing cam2
    # posts it, and the row shows what the server then holds.
    menu = lambda: Select(driver.find_element(By.CSS_SELECTOR, '#audio-inputs [data-meter="tone"] [data-field="follow"]'))
    result["follow_choices"] = wait("the follow menu", lambda: [o.get_attribute("value") for o in menu().options] if len(menu().options) > 1 else None)
    menu().select_by_value("cam2")
    driver.execute_script("document.activeElement.blur()")  # leave the menu, so the next poll may update it
    def followed():
        return audio_route()["inputs"][0].get("follow") == "cam2" and menu().first_selected_option.get_attribute("value")
    result["input_follow"] = wait("the tone input to follow cam2", followed)

    # The outputs panel: add one (to a port nobody listens on: it keeps connecting), stop it, remove it.
    form = driver.find_element(By.CSS_SELECTOR, '[data-role="output-add"]')
    form.find_element(By.NAME, "name").send_keys("backup")
    form.find_element(By.NAME, "url").send_keys("rtmp://127.0.0.1:1/live/browserkey")
    form.find_element(By.CSS_SELECTOR, '[data-action="output-add"]').click()
    row = lambda: driver.find_elements(By.CSS_SELECTOR, '#outputs [data-output="backup"]')
    result["output_added"] = wait("the added output's row", lambda: row() and row()[0].text)
    def click_in_row(action):  # the panel is drawn anew at each poll: find the button and click it in one go
        row()[0].find_element(By.CSS_SELECTOR, f'[data-action="{action}"]').click()
        return True
    wait("the output's stop button", lambda: click_in_row("output-stop"))
    result["output_stopped"] = wait("the output to be stopped", lambda: row() and row()[0].get_attribute("data-state") == "stopped" or None)
    wait("the output's remove button", lambda: click_in_row("output-remove"))
    result["output_removed"] = wait("the output's row to go", lambda: not row() or None)

    driver.execute_script("window.scrollTo(0, 0)")
    time.sleep(0.3)  # let the tiles show their newest pictures for the screenshot
    driver.save_screenshot(OUTPUT)
finally:
    driver.quit()
print(json.dumps(result))
