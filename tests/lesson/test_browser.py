"""A learner's first session, in a real browser: JupyterLab, the house-price notebook, a slider moved.

JupyterLab serves a folder of solved notebooks on loopback with a token;
Debian's Chromium (apt-get install chromium), driven by playwright without a
browser download, opens lookup.ipynb, runs every cell, moves the query slider
and saves a screenshot of the widget (to $SOFTLOOKUP_SCREENSHOTS if set, else
the test's temporary folder); the same for the two other widgets, and for
the summary.html an instructor opens after grading a class. Skipped, saying
why, where Chromium or playwright is missing; CI installs both.
"""

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from helpers import solved_folder

pytestmark = pytest.mark.slow  # a whole road end to end (tests/pytest.ini)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# This machine has no network: without these flags Chromium keeps trying to reach Google's services.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
STEPS = 10  # presses of the right arrow on the query slider: 3.0 -> 4.0 bedrooms
# JupyterLab settings for a test: every cell stays in the page (no windowing), and no question about news.
SETTINGS = {"notebook-extension/tracker": {"windowingMode": "none"},
            "apputils-extension/notification": {"fetchNews": "false"}}

if not os.path.exists(CHROMIUM):
    pytest.skip("no Chromium at /usr/bin/chromium: install Debian's chromium and chromium-driver "
                "(apt-get install chromium chromium-driver) to run the browser test", allow_module_level=True)
playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install -e '.[browser]'")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def jupyter_lab(tmp_path):
    """JupyterLab on 127.0.0.1 serving solved notebooks; yields the URL of a notebook (by name) with its token, and
    the served folder as its ``folder``."""
    folder = solved_folder(tmp_path / "notebooks")
    port, token = free_port(), secrets.token_hex(16)
    home = {name: str(tmp_path / "jupyter" / name) for name in ("config", "data", "runtime", "settings", "workspaces")}
    # `-m jupyterlab`, not `jupyter lab`: the jupyter command runs the first jupyter-lab on PATH, maybe another
    # Python's, whose kernels would import another copy of the kit than the one under test. (The widgets'
    # JupyterLab extension is found through JUPYTER_PATH: tests/own_folders.py.)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "JUPYTER_CONFIG_DIR": home["config"], "JUPYTER_DATA_DIR": home["data"],
           "JUPYTER_RUNTIME_DIR": home["runtime"], "JUPYTERLAB_SETTINGS_DIR": home["settings"],
           "JUPYTERLAB_WORKSPACES_DIR": home["workspaces"]}
    for name, values in SETTINGS.items():
        path = Path(home["settings"]) / "@jupyterlab" / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--allow-root"],  # CI runs as root
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "jupyter.log", "w"))
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("JupyterLab did not start:\n" + (tmp_path / "jupyter.log").read_text()[-2000:])
                time.sleep(0.3)
        def url(notebook: str) -> str:
            return f"{base}/lab/tree/{notebook}?token={token}"

        url.folder = folder  # where a test may add a notebook of its own
        yield url
    finally:
        server.terminate()
        server.wait(20)


def run_every_cell(page, url):
    page.goto(url)
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)  # the kernel is ready
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()


def test_house_price_widget_reacts_in_jupyterlab(jupyter_lab, tmp_path):
    screenshots = Path(os.environ.get("SOFTLOOKUP_SCREENSHOTS", tmp_path))
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        run_every_cell(page, jupyter_lab("lookup.ipynb"))

        widget = page.locator(".jp-OutputArea-output").filter(has=page.locator(".widget-slider")).first
        widget.get_by_text("£275.11k").wait_for(timeout=120_000)  # the learner's soft_lookup, query 3, sharpness 1.5
        assert "49.45%" in widget.inner_text()

        handle = widget.locator(".widget-slider").filter(has_text="bedrooms").locator(".noUi-handle")
        handle.focus()
        for _ in range(STEPS):
            handle.press("ArrowRight")
        widget.get_by_text("Answer for 4.0 bedrooms").wait_for(timeout=30_000)
        assert "£354.30k" in widget.inner_text()

        screenshots.mkdir(parents=True, exist_ok=True)
        shot = screenshots / "house-prices-widget.png"
        widget.screenshot(path=str(shot))
        browser.close()
    assert shot.read_bytes()[:4] == b"\x89PNG"
    print(f"screenshot: {shot}")


def widget_text(page, control: str) -> str:
    """The text of the output that holds ``control``, once its picture has loaded: the widget's own output only.

    The notebook's source is on the page too (a solved notebook's comments
    may hold the very number a widget should draw), so a number is read from
    the widget's output area alone, never from the page's body.
    """
    widget = page.locator(".jp-OutputArea-output").filter(has=page.get_by_text(control)).first
    picture = widget.locator("img")
    picture.wait_for(timeout=120_000)
    page.wait_for_function("image => image.complete && image.naturalWidth > 0", arg=picture.element_handle())
    return widget.inner_text()


@pytest.mark.parametrize("notebook,control,shown", [
    ("attention.ipynb", "is a thing", "77.68%"),  # the two-number query: "cat"'s weight in its table
    ("gpt2_heads.ipynb", "layer", "tiny GPT-2"),  # a head of the tiny GPT-2, saying so
])
def test_the_other_widgets_draw_in_jupyterlab(jupyter_lab, tmp_path, notebook, control, shown):
    screenshots = Path(os.environ.get("SOFTLOOKUP_SCREENSHOTS", tmp_path))
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})  # the whole widget on the screen
        run_every_cell(page, jupyter_lab(notebook))
        text = widget_text(page, control)
        assert shown in text, text[:2000]
        screenshots.mkdir(parents=True, exist_ok=True)
        shot = screenshots / f"{notebook.removesuffix('.ipynb')}-widget.png"
        page.locator(".jp-OutputArea-output").filter(has=page.get_by_text(control)).first.screenshot(path=str(shot))
        browser.close()
    assert shot.read_bytes()[:4] == b"\x89PNG"
    print(f"screenshot: {shot}")


# A widget that draws its control and a blank picture but no table, in a notebook whose source holds the number:
# the reading above must not find it (the defect it once had: the number was taken from anywhere on the page).
DRAWS_NOTHING = """# the two-number widget shows 77.68% for "cat"
import base64
import ipywidgets
from IPython.display import display

BLANK = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
display(ipywidgets.VBox([ipywidgets.FloatSlider(description="is a thing"), ipywidgets.Image(value=BLANK)]))
"""


def test_a_widget_that_draws_nothing_is_not_read_as_drawn(jupyter_lab):
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(DRAWS_NOTHING)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(notebook, jupyter_lab.folder / "blank.ipynb")
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        run_every_cell(page, jupyter_lab("blank.ipynb"))
        text = widget_text(page, "is a thing")
        assert "77.68%" in page.inner_text("body")  # the page holds the number, in the notebook's source
        assert "77.68%" not in text
        browser.close()


def test_the_class_summary_reads_in_a_browser(tmp_path):
    """summary.html of a class graded as an instructor grades it: its charts load and its tables show."""
    from classes import cli, honest, modules, reference
    from mistakes import MISTAKES

    submissions = tmp_path / "submissions"
    submissions.mkdir()
    for number in range(2):
        honest(submissions / f"honest-{number}")
    for number, name in enumerate(("no max subtraction", "soft score sign flipped", "soft score sign flipped")):
        mistake = next(m for m in MISTAKES if m.name == name)
        mistake.apply(honest(submissions / f"mistake-{number}"))
    modules(submissions / "looping", {"softmax": "def softmax(x, axis=-1):\n    while True:\n        pass\n"})
    (submissions / "empty").mkdir()
    done = cli(submissions, tmp_path / "out", "--time-limit", "1")
    assert done.returncode == 0, done.stderr
    screenshots = Path(os.environ.get("SOFTLOOKUP_SCREENSHOTS", tmp_path))
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto((tmp_path / "out" / "summary.html").as_uri())
        loaded = page.evaluate("[...document.images].map(image => image.complete && image.naturalWidth > 0)")
        assert loaded == [True, True]  # the histogram and the chart of mistakes
        text = page.inner_text("body")
        assert "What to reteach" in text and "Ran out of time or memory, or crashed" in text
        assert "sign of the score is flipped" in text and "2 of" in text  # two of the students made it
        screenshots.mkdir(parents=True, exist_ok=True)
        shot = screenshots / "summary.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert shot.read_bytes()[:4] == b"\x89PNG"
    print(f"screenshot: {shot}")
