"""Print what the browser test measured (overflow, alt text, figure font) at the end of the run."""

import json
from pathlib import Path

REPORT = Path(__file__).resolve().parents[2] / "_build" / "browser-report.json"


def pytest_sessionstart(session):
    session.config._book_report_mtime = REPORT.stat().st_mtime if REPORT.exists() else None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not REPORT.exists() or REPORT.stat().st_mtime == getattr(config, "_book_report_mtime", None):
        return
    data = json.loads(REPORT.read_text())
    tr = terminalreporter
    tr.section("what a reader sees (book browser test)")
    tr.write_line(f"overflowing output blocks by width: {data['overflowing_blocks_by_width']}")
    missing = {k: v for k, v in data["images_without_alt_by_page"].items() if v}
    tr.write_line(f"images without alt text: {data['images_without_alt_total']} {missing}"
                  f"{'' if data['alt_text_strict'] else '  (report-only: BOOK_ALT_TEXT_STRICT=0)'}")
    tr.write_line(f"smallest figure text at 390 px (estimated, px): {data['smallest_figure_font_px_at_390']}")
    if data["raw_titles"]:
        tr.write_line(f"raw LaTeX/MyST in titles or navigation: {data['raw_titles']}")
    tr.write_line(f"details: {REPORT}")
