"""Drive headless Chromium over the built HTML book, as a reader would.

Served from ``_build/html`` on localhost. For the front page and every chapter: no console errors,
every image loaded (non-zero natural width), math typeset by the bundled (offline) MathJax, no script
loaded from another host, and Colab/Binder launch links that point at the chapter's ``.ipynb`` on the
configured repository and branch. Screenshots land in ``_build/screenshots/``.

Needs ``make book`` first and Debian's ``chromium`` + ``chromium-driver``; run with ``make browser-test``.
"""

import functools
import http.server
import shutil
import socketserver
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
sys.path.insert(0, str(ROOT / "tools"))
import ledger  # noqa: E402

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
REPO_URL = CONFIG["repository"]["url"].rstrip("/")
BRANCH = CONFIG["repository"]["branch"]
ORG_REPO = urlparse(REPO_URL).path.strip("/")
SLUGS = ledger.toc_chapters()
PAGES = ["book/intro"] + [f"book/chapters/{s}" for s in SLUGS]


def _find(*names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


@pytest.fixture(scope="module")
def server():
    if not (HTML / "book" / "intro.html").exists():
        pytest.fail("no built book: run `make book` first")
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    httpd = socketserver.TCPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chrome, chromedriver = _find("chromium", "chromium-browser"), _find("chromedriver")
    if not chrome or not chromedriver:
        pytest.fail("Debian's chromium and chromium-driver are required (apt-get install chromium chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,2000"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(chromedriver), options=opts)
    d.set_page_load_timeout(60)
    yield d
    d.quit()


def _load(driver, url, expect_math):
    driver.get(url)
    deadline = time.time() + 30
    while time.time() < deadline:
        ready = driver.execute_script(
            "return document.readyState === 'complete' && "
            "Array.from(document.images).every(i => i.complete) && "
            "(!arguments[0] || document.querySelectorAll('mjx-container').length > 0)",
            expect_math,
        )
        if ready:
            return True
        time.sleep(0.25)
    return False


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_for_a_reader(server, driver, page):
    is_chapter = page.startswith("book/chapters/")
    url = f"{server}/{page}.html"
    driver.get_log("browser")  # drain: the log is per session, keep only this page's messages
    settled = _load(driver, url, expect_math=is_chapter)
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / f"{page.split('/')[-1]}.png"))
    assert settled, f"{page}: page, images or math did not finish loading within 30 s"

    errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert not errors, f"{page}: console errors: {[e['message'] for e in errors]}"

    broken = driver.execute_script(
        "return Array.from(document.images).filter(i => !(i.naturalWidth > 0)).map(i => i.src)"
    )
    assert not broken, f"{page}: images that did not load: {broken}"

    external_scripts = driver.execute_script(
        "return Array.from(document.scripts).map(s => s.src)"
        ".filter(s => s && !s.startsWith(location.origin))"
    )
    assert not external_scripts, f"{page}: scripts loaded from other hosts (book must work offline): {external_scripts}"

    if is_chapter:
        n_math = driver.execute_script("return document.querySelectorAll('mjx-container').length")
        assert n_math > 0, f"{page}: no typeset math"
        n_img = driver.execute_script("return document.querySelectorAll('.cell_output img').length")
        assert n_img > 0, f"{page}: no figure in the chapter's outputs"
        slug = page.split("/")[-1]
        hrefs = driver.execute_script("return Array.from(document.querySelectorAll('a')).map(a => a.href)")
        colab = [h for h in hrefs if "colab.research.google.com" in h]
        binder = [h for h in hrefs if "mybinder.org" in h]
        want_colab = f"https://colab.research.google.com/github/{ORG_REPO}/blob/{BRANCH}/book/chapters/{slug}.ipynb"
        assert want_colab in colab, f"{page}: Colab link {colab} != {want_colab}"
        assert binder, f"{page}: no Binder link"
        b = urlparse(binder[0])
        assert b.path == f"/v2/gh/{ORG_REPO}/{BRANCH}", f"{page}: Binder link {binder[0]}"
        assert unquote(b.query).endswith(f"book/chapters/{slug}.ipynb"), f"{page}: Binder link {binder[0]}"
    else:
        text = driver.execute_script("return document.body.innerText")
        assert "PASS" in text, "front page: the claims ledger is not visible"


def test_offline_search_index_exists():
    assert (HTML / "searchindex.js").exists() and (HTML / "search.html").exists()
    assert (HTML / "_static" / "mathjax").is_dir(), "MathJax is not bundled (sphinx-mathjax-offline)"
