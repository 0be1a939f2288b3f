"""Collect what the browser test measured (overflow, alt text, figure font) and print it at the end of the run.

The page tests may run on several pytest-xdist workers (``make browser-test`` uses ``JOBS`` of them): each worker
writes its measurements to a part file when its session ends, and the controller (or a plain, single-process run)
merges the parts into ``_build/browser-report.json`` and prints the summary."""

import json
import sys
from pathlib import Path

REPORT = Path(__file__).resolve().parents[2] / "_build" / "browser-report.json"
PARTS = REPORT.parent / "browser-report-parts"
_KEYS = ("overflow", "alt_missing", "figure_font_px_390", "raw_titles", "reading")


def _measured():
    """The running test module's ``REPORT_DATA`` (None if the page tests were not collected)."""
    mod = next((m for name, m in sys.modules.items() if name.endswith("test_built_book")), None)
    return getattr(mod, "REPORT_DATA", None), mod


def pytest_sessionstart(session):
    session.config._book_report_mtime = REPORT.stat().st_mtime if REPORT.exists() else None
    if not hasattr(session.config, "workerinput"):  # controller or single process: start from no parts
        for part in PARTS.glob("*.json") if PARTS.exists() else ():
            part.unlink()


def pytest_sessionfinish(session, exitstatus):
    data, mod = _measured()
    worker = getattr(session.config, "workerinput", None)
    if worker is not None:  # an xdist worker: hand the measurements to the controller
        if data is not None:
            PARTS.mkdir(parents=True, exist_ok=True)
            (PARTS / f"{worker['workerid']}.json").write_text(json.dumps(data))
        return
    merged = {k: {} for k in _KEYS}
    parts = sorted(PARTS.glob("*.json")) if PARTS.exists() else []
    for part in parts:
        for k, v in json.loads(part.read_text()).items():
            merged[k].update(v)
    if data is not None:
        for k in _KEYS:
            merged[k].update(data[k])
    if mod is None and parts:  # the controller of an xdist run does not import the test module
        sys.path.insert(0, str(Path(__file__).parent))
        import test_built_book as mod  # noqa: PLC0415
    if mod is not None and any(merged.values()):
        mod.write_report(merged)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not REPORT.exists() or REPORT.stat().st_mtime == getattr(config, "_book_report_mtime", None):
        return
    data = json.loads(REPORT.read_text())
    tr = terminalreporter
    tr.section("what a reader sees (book browser test)")
    tr.write_line(f"pages measured: {data['pages_measured']}; overflowing output blocks by width: "
                  f"{data['overflowing_blocks_by_width']}")
    missing = {k: v for k, v in data["images_without_alt_by_page"].items() if v}
    tr.write_line(f"images without alt text: {data['images_without_alt_total']} {missing}"
                  f"{'' if data['alt_text_strict'] else '  (report-only: BOOK_ALT_TEXT_STRICT=0)'}")
    tr.write_line(f"smallest figure text at 390 px (estimated, px): {data['smallest_figure_font_px_at_390']}")
    if data["raw_titles"]:
        tr.write_line(f"raw LaTeX/MyST in titles or navigation: {data['raw_titles']}")
    for mode, counts in data.get("reading", {}).items():
        if isinstance(counts, dict):
            tr.write_line(f"reading at {mode}: fails on {counts['fails']}")
            tr.write_line(f"reading at {mode}: report-only {counts['report']}")
        else:
            tr.write_line(f"{mode}: {counts}")
    tr.write_line(f"details: {REPORT}")
