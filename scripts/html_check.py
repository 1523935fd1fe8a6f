#!/usr/bin/env python3
"""Checks the exported lesson pages in a real headless browser (Chromium through chromedriver,
spoken to over WebDriver's HTTP protocol with the standard library only).

For each lesson given (default: every lesson `tilelab lessons --json` lists):
  1. `tilelab lessons export LESSON --html DIR` and `tilelab lessons show LESSON --json`;
  2. loads file://DIR/LESSON.html in headless Chromium; the browser log must hold no error or
     warning (console errors, script exceptions, failed loads) and the page must have loaded
     no resource (Performance API: 0 entries);
  3. for every layout (chosen in the page's select) and every step (reached by clicking the
     page's "next" button): a step that asks a question first shows "?" for its numbers and
     no picture (the answer stays hidden), until its "Show the answer" is opened (clicked
     here; it stays open for the other layouts); then the shown wavefronts, ideal and bank
     conflicts equal `show --json --answers`'s steps[i].results[LAYOUT] ("-" for steps without
     a shared access), exactly
     one picture is visible and it is a different one at every step (a hash of its SVG), and a
     screenshot of the window is taken: a PNG, different from the previous step's;
  4. "back" returns to the previous step, then the → key goes forward and ← back (a different
     picture each time); the 1 and l keys switch to the first and the next layout;
  5. with --screenshots DIR, saves the PNG of each step under each layout
     (DIR/LESSON-LAYOUT-stepN.png, LAYOUT with `_` for other characters than letters and digits);
  6. with --dump FILE, writes what the page showed at each (lesson, layout, step): tests/export.rs
     compares it with the TUI's counters pane, the lesson files and the H200's measurements.

Prints one line per lesson and ends `N passed, N failed`; exit 0 only when every lesson
passed. Without chromium or chromedriver it prints `SKIPPED: ...` and exits 77: a skip is never
a pass (tests/export.rs reports it as SKIPPED, a failure under TILELAB_REQUIRE=chromium,
which .ci/run sets where the browser is installed).

Before the lessons it loads a page that logs a console error and fails (exit 2) unless the log
shows it, so a browser whose log cannot be read never passes the no-errors check.

Usage: scripts/html_check.py [--bin target/release/tilelab] [--dir LESSONS] [--screenshots DIR]
                             [--dump FILE] [LESSON...]
Install the browser: apt-get install -y chromium chromium-driver
"""

import argparse
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

SKIP = 77


def find(names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Driver:
    """The few WebDriver commands the check needs."""

    def __init__(self, chromedriver, chromium):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [chromedriver, f"--port={self.port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(100):
            try:
                self.call("GET", "/status")
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        caps = {
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": chromium,
                        "args": [
                            "--headless=new",
                            "--no-sandbox",
                            "--disable-gpu",
                            "--disable-dev-shm-usage",
                            "--window-size=1400,1000",
                        ],
                    },
                    "goog:loggingPrefs": {"browser": "ALL"},
                }
            }
        }
        self.session = self.call("POST", "/session", caps)["sessionId"]

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read().decode() or "{}").get("value")
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"webdriver {method} {path}: {e.read().decode()[:300]}") from None

    def s(self, method, path, body=None):
        return self.call(method, f"/session/{self.session}{path}", body)

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def element(self, css):
        v = self.s("POST", "/element", {"using": "css selector", "value": css})
        return next(iter(v.values()))

    def click(self, css):
        self.s("POST", f"/element/{self.element(css)}/click", {})

    def key(self, value):
        """Presses and releases one key (WebDriver actions: the page gets a real keydown)."""
        self.s("POST", "/actions", {"actions": [{
            "type": "key", "id": "keyboard",
            "actions": [{"type": "keyDown", "value": value}, {"type": "keyUp", "value": value}],
        }]})

    def screenshot(self):
        return base64.b64decode(self.s("GET", "/screenshot"))

    def log(self):
        return self.s("POST", "/se/log", {"type": "browser"}) or []

    def quit(self):
        try:
            self.s("DELETE", "")
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=10)


SHOWN = """
function hash(t) {
  var h = 0;
  for (var i = 0; i < t.length; i++) { h = (Math.imul(h, 31) + t.charCodeAt(i)) | 0; }
  return t.length + ':' + (h >>> 0).toString(16);
}
var figs = Array.prototype.filter.call(document.querySelectorAll('figure[data-step]'),
  function (f) { return !f.hidden && f.offsetParent !== null; });
return {
  pos: document.getElementById('pos').textContent,
  wf: document.getElementById('wf').textContent,
  ideal: document.getElementById('ideal').textContent,
  cf: document.getElementById('cf').textContent,
  stated: document.getElementById('stated').textContent,
  run_wf: document.getElementById('run-wf').textContent,
  run_ideal: document.getElementById('run-ideal').textContent,
  run_cf: document.getElementById('run-cf').textContent,
  run_sass: document.getElementById('run-sass').textContent,
  h1: document.querySelector('header h1').textContent,
  scripts: document.scripts.length,
  imgs: document.images.length,
  resources: performance.getEntriesByType('resource').length,
  visible: figs.length,
  fig: figs.length ? figs[0].dataset.step + '/' + figs[0].dataset.layout : '',
  svg: figs.length ? hash(figs[0].innerHTML) : '',
  layout_menu: document.getElementById('layout').value,
  hidden_pic: !document.getElementById('hidden-pic').hidden,
  caption: figs.length && figs[0].querySelectorAll('svg text').length > 1 ?
    figs[0].querySelectorAll('svg text')[1].textContent : ''
};
"""


ARROW_LEFT, ARROW_RIGHT = "\ue012", "\ue014"


def png_size(png):
    """(width, height) of a PNG, or None when `png` is not one."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        return None
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def check_lesson(d, tl, lesson, outdir, shots, dump):
    subprocess.run(tl + ["export", lesson, "--html", outdir], check=True,
                   stdout=subprocess.DEVNULL)
    show = json.loads(subprocess.run(tl + ["show", lesson, "--json", "--answers"], check=True,
                                     capture_output=True, text=True).stdout)
    page = os.path.join(outdir, f"{lesson}.html")
    d.s("POST", "/url", {"url": "file://" + os.path.abspath(page)})
    problems = []
    steps = show["steps"]
    layouts = show["layouts"]
    revealed = set()
    for li, layout in enumerate(layouts):
        d.js("var s = document.getElementById('layout'); s.value = arguments[0];"
             "s.dispatchEvent(new Event('change'));", str(li))
        # back to step 1
        for _ in range(len(steps)):
            d.click("#prev") if d.js("return !document.getElementById('prev').disabled") else None
        seen = set()
        last_png = None
        for i, st in enumerate(steps):
            where = f"{lesson} step {i + 1} under '{layout}'"
            hidden = None
            if st.get("exercise") and i not in revealed:
                # The question's answer is hidden: numbers "?" (or "-": no shared access), no
                # picture, the placeholder instead; then the reader opens "Show the answer".
                hidden = d.js(SHOWN)
                blank = "?" if st["results"].get(layout) else "-"
                if (hidden["wf"], hidden["ideal"], hidden["cf"]) != (blank, blank, blank) or \
                        hidden["run_wf"] != "?" or hidden["visible"] != 0 or not hidden["hidden_pic"]:
                    problems.append(f"{where}: the answer shows before it is asked for: "
                                    f"{hidden['wf']}/{hidden['ideal']}/{hidden['cf']}, running "
                                    f"{hidden['run_wf']}, {hidden['visible']} pictures")
                d.click(f'[data-note="{i}"] details[data-reveal] summary')
                revealed.add(i)
                # The details' toggle event comes as a task after the click: wait for it.
                for _ in range(100):
                    if not d.js(SHOWN)["hidden_pic"]:
                        break
                    time.sleep(0.02)
            got = d.js(SHOWN)
            # A screenshot at every step: a PNG of the window, different from the step before.
            png = d.screenshot()
            size = png_size(png)
            if not size or size[0] < 800 or size[1] < 600:
                problems.append(f"{where}: the screenshot is no PNG of the window ({size})")
            if png == last_png:
                problems.append(f"{where}: the screenshot equals the previous step's")
            last_png = png
            got["screenshot"] = {"bytes": len(png), "size": list(size or ())}
            dump.append(dict(got, lesson=lesson, layout=layout, step=i + 1, hidden_before=hidden))
            r = st["results"].get(layout)
            want = (str(r["wavefronts"]), str(r["ideal"]), str(r["conflicts"])) if r else ("-", "-", "-")
            shown = (got["wf"], got["ideal"], got["cf"])
            if got["pos"] != f"step {i + 1} / {len(steps)}":
                problems.append(f"{where}: position shows '{got['pos']}'")
            if shown != want:
                problems.append(f"{where}: page shows wavefronts/ideal/conflicts {shown}, "
                                f"`lessons show --json` says {want}")
            if got["visible"] != 1 or got["fig"] != f"{i}/{li}":
                problems.append(f"{where}: {got['visible']} pictures visible ({got['fig']})")
            if got["svg"] in seen:
                problems.append(f"{where}: the picture did not change")
            if got["resources"] != 0:
                problems.append(f"{where}: the page loaded {got['resources']} resources")
            seen.add(got["svg"])
            if shots:
                slug = "".join(c if c.isalnum() else "_" for c in layout)
                with open(os.path.join(shots, f"{lesson}-{slug}-step{i + 1}.png"), "wb") as f:
                    f.write(png)
            if i + 1 < len(steps):
                d.click("#next")
        if len(steps) > 1:
            d.click("#prev")
            back = d.js(SHOWN)
            if back["pos"] != f"step {len(steps) - 1} / {len(steps)}":
                problems.append(f"{lesson} under '{layout}': back shows '{back['pos']}'")
            # The keys: → forward, ← back, each changing the picture.
            d.key(ARROW_RIGHT)
            fwd = d.js(SHOWN)
            if fwd["pos"] != f"step {len(steps)} / {len(steps)}" or fwd["svg"] == back["svg"]:
                problems.append(f"{lesson} under '{layout}': → shows '{fwd['pos']}' "
                                f"(picture changed: {fwd['svg'] != back['svg']})")
            d.key(ARROW_LEFT)
            bwd = d.js(SHOWN)
            if bwd["pos"] != back["pos"] or bwd["svg"] != back["svg"]:
                problems.append(f"{lesson} under '{layout}': ← shows '{bwd['pos']}'")
    # The layout keys: l cycles to the next layout, 1 goes back to the first (same step).
    if len(layouts) > 1:
        d.key("1")
        first = d.js(SHOWN)
        d.key("l")
        second = d.js(SHOWN)
        step = first["fig"].split("/")[0]
        if (first["layout_menu"], second["layout_menu"]) != ("0", "1") or \
                second["fig"] != f"{step}/1":
            problems.append(f"{lesson}: keys 1 and l show layouts {first['fig']} and "
                            f"{second['fig']} (menu {first['layout_menu']}, {second['layout_menu']})")
    errors = [e for e in d.log() if e.get("level") in ("SEVERE", "ERROR", "WARNING")]
    for e in errors:
        problems.append(f"{lesson}: browser log: {e.get('message', '')[:200]}")
    return problems, len(steps) * len(layouts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release/tilelab")
    ap.add_argument("--screenshots", metavar="DIR")
    ap.add_argument("--dir", metavar="DIR", help="lessons from DIR (tilelab lessons --dir)")
    ap.add_argument("--dump", metavar="FILE",
                    help="write what the page showed at every (lesson, layout, step) as JSON")
    ap.add_argument("lessons", nargs="*")
    a = ap.parse_args()
    chromium = find(["chromium", "chromium-browser", "google-chrome"])
    chromedriver = find(["chromedriver"])
    if not chromium or not chromedriver:
        print("SKIPPED: the HTML export browser check needs chromium and chromedriver "
              "(apt-get install -y chromium chromium-driver); nothing was checked")
        return SKIP
    if not os.path.exists(a.bin):
        print(f"html_check: error: no tilelab binary at '{a.bin}' (cargo build --release, or --bin)")
        return 2
    tl = [a.bin, "lessons"] + (["--dir", a.dir] if a.dir else [])
    names = a.lessons or [l["name"] for l in json.loads(subprocess.run(
        tl + ["--json"], check=True, capture_output=True, text=True).stdout)]
    if a.screenshots:
        os.makedirs(a.screenshots, exist_ok=True)
    d = Driver(chromedriver, chromium)
    passed = failed = 0
    dump = []
    try:
        # The check below reads console errors from the browser log: first prove it can see one.
        probe = "<script>console.error('tilelab-log-probe')</script>"
        d.s("POST", "/url", {"url": "data:text/html," + urllib.parse.quote(probe)})
        if not any("tilelab-log-probe" in e.get("message", "") for e in d.log()):
            print("html_check: error: the browser log shows no console error of a page that "
                  "logs one; page errors would go unseen")
            return 2
        with tempfile.TemporaryDirectory() as out:
            for name in names:
                problems, views = check_lesson(d, tl, name, out, a.screenshots, dump)
                if problems:
                    failed += 1
                    print(f"FAIL {name}:")
                    for p in problems:
                        print(f"  {p}")
                else:
                    passed += 1
                    print(f"ok   {name}: {views} step/layout views match `lessons show --json`, no browser errors")
    finally:
        d.quit()
    if a.dump:
        with open(a.dump, "w") as f:
            json.dump(dump, f, indent=1)
    print(f"html_check: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
