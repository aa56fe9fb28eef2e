#!/usr/bin/python3
"""Drives the talent's tally page (/tally/NAME) in headless chromium (Debian's chromium + chromium-driver,
Selenium).

Usage: tally_test.py URL READY_FILE
Run by BrowserTallyTests (Tests/StudioServerTests), which starts the real server. Once the page is live
(its event stream open: body data-state="live") and dark (data-tally="none"), creates READY_FILE; the
test then puts the camera on program. Reports on stdout, as one JSON object:
  before: {tally, background}   the body's data-tally and computed background colour when ready
  red_at_ms                     when data-tally turned "program" (wall time, ms since the epoch, in the page)
  after: {tally, background, name, state, clock, program}  then: the body's colour, the name shown, the
                                state word, the clock and the program time as shown
Exits 2 with a message when a step does not happen in time.
"""
import json
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

URL, READY = sys.argv[1], sys.argv[2]


def fail(message):
    print(json.dumps({"error": message}))
    sys.exit(2)


def wait(description, condition, seconds=20, every=0.02):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            value = condition()
        except Exception:
            value = None
        if value:
            return value
        time.sleep(every)
    fail(f"timed out waiting for {description}")


options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=400,700"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
try:
    driver.get(URL)
    body = lambda name: driver.execute_script(f"return document.body.dataset.{name}")
    background = lambda: driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    text = lambda id: driver.execute_script(f"return document.getElementById('{id}').textContent")
    wait("the page live and dark", lambda: body("state") == "live" and body("tally") == "none")
    result = {"before": {"tally": body("tally"), "background": background()}}
    open(READY, "w").close()
    wait("the page red", lambda: body("tally") == "program", seconds=20, every=0.005)
    result["red_at_ms"] = driver.execute_script("return Date.now()")
    wait("the program time shown", lambda: text("program"))
    result["after"] = {"tally": body("tally"), "background": background(), "name": text("name"), "state": text("state"),
                       "clock": text("clock"), "program": text("program")}
    print(json.dumps(result))
finally:
    driver.quit()
