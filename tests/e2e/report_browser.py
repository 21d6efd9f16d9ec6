#!/usr/bin/python3
"""Opens a page of `mavg report html` in headless Chromium and checks it as a reader sees it:
no script or load errors, the tables with their rows, every figure loaded with a size, the
status, and that clicking a header of the run list sorts the rows (up, then down). Saves a
screenshot of the whole page. Debian's chromium, chromium-driver and python3-selenium; the
browser gets no network (the page must not need any).

  report_browser.py PAGE --screenshot PNG --runs N --metric-rows R --speedup-rows S --figures F
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def browser(profile):
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--window-size=1400,1000", "--hide-scrollbars",
                 # No network at all: every host name fails to resolve, and anything else goes
                 # to a proxy nobody listens on. The page must load without either.
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9"]:
        o.add_argument(flag)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


def rows(d, css):
    return d.find_elements(By.CSS_SELECTOR, css)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("page")
    p.add_argument("--screenshot", required=True)
    p.add_argument("--runs", type=int, required=True)
    p.add_argument("--metric-rows", type=int, required=True)
    p.add_argument("--speedup-rows", type=int, required=True)
    p.add_argument("--figures", type=int, required=True)
    p.add_argument("--sort-by", default="test_error", help="a numeric column of the run list")
    a = p.parse_args()
    profile = tempfile.mkdtemp(prefix="mavg-chromium-")
    d = browser(profile)
    try:
        d.get_log("performance")  # drop what the browser's own start page requested
        d.get("file://" + os.path.abspath(a.page))
        # DataTables wraps the run list once its script ran.
        WebDriverWait(d, 60).until(lambda x: x.find_elements(By.ID, "runs_wrapper"))
        WebDriverWait(d, 60).until(
            lambda x: x.execute_script("return document.readyState") == "complete")
        errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
        if errors:
            fail(f"the browser reported errors: {errors}")
        print("ok: no errors in the browser's console")
        # Everything the browser requested (the page, scripts, styles, images, fonts: the
        # DevTools network log) came from the page's own files.
        requested = []
        for entry in d.get_log("performance"):
            m = json.loads(entry["message"])["message"]
            if m.get("method") == "Network.requestWillBeSent":
                requested.append(m["params"]["request"]["url"])
        if len(requested) < 3:
            fail(f"the network log shows only {requested}: cannot check what the page loads")
        remote = [u for u in requested if not u.startswith(("file:", "data:", "chrome:"))]
        if remote:
            fail(f"the page loaded from outside its directory: {remote}")
        print(f"ok: all {len(requested)} requests of the page were for its own files")

        metric = rows(d, "table.metric")
        if not metric:
            fail("no metric table")
        for t in metric:
            n = len(t.find_elements(By.CSS_SELECTOR, "tbody tr"))
            if n != a.metric_rows:
                fail(f"metric table {t.get_attribute('data-metric')}: {n} rows, "
                     f"expected {a.metric_rows}")
        print(f"ok: {len(metric)} metric tables of {a.metric_rows} rows")
        n = len(rows(d, "#speedup-table tbody tr"))
        if n != a.speedup_rows:
            fail(f"speedup table: {n} rows, expected {a.speedup_rows}")
        notes = rows(d, "#speedup-table tbody td.notes")
        if len(notes) != a.speedup_rows:
            fail(f"speedup table: {len(notes)} notes cells, expected one a row")
        groups = [g.text for g in rows(d, "#speedup-table th.group")]
        for label in ("Measured", "Projected", "Modelled"):
            if not any(g.startswith(label) for g in groups):
                fail(f"speedup table: no '{label}' column group in {groups}")
        print(f"ok: speedup table of {n} rows, columns grouped {groups}")
        n = len(rows(d, "#runs tbody tr"))
        if n != a.runs:
            fail(f"run list: {n} rows, expected {a.runs}")
        status = d.find_element(By.ID, "status-counts").text
        if f"done {a.runs}" not in status:
            fail(f"status: '{status}' does not say done {a.runs}")
        print(f"ok: run list of {n} rows; status '{status.splitlines()[0]}'")

        imgs = rows(d, "#figures img")
        if len(imgs) != a.figures:
            fail(f"{len(imgs)} figures, expected {a.figures}")
        for img in imgs:
            w = d.execute_script("return arguments[0].complete ? arguments[0].naturalWidth : 0",
                                 img)
            h = d.execute_script("return arguments[0].naturalHeight", img)
            if not w or not h:
                fail(f"figure {img.get_attribute('src')} did not load")
            if img.size["width"] < 200:
                fail(f"figure {img.get_attribute('src')} shown {img.size['width']} px wide")
        print(f"ok: {len(imgs)} figures loaded")

        # Sorting: a click on the header sorts by the column (its numbers, data-order), a second
        # click the other way; both orders differ, and at least one from the page's own order.
        headers = [th.text for th in rows(d, "#runs thead th")]
        if a.sort_by not in headers:
            fail(f"no column {a.sort_by} in the run list: {headers}")
        col = headers.index(a.sort_by) + 1

        def column():
            ids = [td.text for td in rows(d, "#runs tbody tr td:nth-child(1)")]
            vals = [float(td.get_attribute("data-order"))
                    for td in rows(d, f"#runs tbody tr td:nth-child({col})")]
            return ids, vals

        before, values = column()
        if len(set(values)) < 2:
            fail(f"column {a.sort_by} has one value: nothing to sort")
        th = rows(d, "#runs thead th")[col - 1]
        d.execute_script("arguments[0].scrollIntoView({block: 'center'})", th)
        th.click()
        up, up_values = column()
        if up_values != sorted(values):
            fail(f"after one click {a.sort_by} is not ascending: {up_values}")
        th.click()
        down, down_values = column()
        if down_values != sorted(values, reverse=True):
            fail(f"after two clicks {a.sort_by} is not descending: {down_values}")
        if up == down or (up == before and down == before):
            fail("clicking the header did not reorder the rows")
        print(f"ok: clicking '{a.sort_by}' sorts the runs up, then down")
        # Back to the page's order for the screenshot; then the whole page.
        d.get("file://" + os.path.abspath(a.page))
        WebDriverWait(d, 60).until(lambda x: x.find_elements(By.ID, "runs_wrapper"))
        height = d.execute_script("return document.documentElement.scrollHeight")
        d.set_window_size(1400, min(max(height, 1000), 8000))
        if not d.save_screenshot(a.screenshot) or os.path.getsize(a.screenshot) < 10000:
            fail(f"no screenshot in {a.screenshot}")
        print(f"ok: screenshot {a.screenshot} (1400 x {height})")
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
