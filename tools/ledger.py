"""The front-page table, the claims ledger and the status page, generated from the executed chapters.

Three generated pages, nothing in them typed by hand (``tests/test_ledger.py`` fails when they
disagree with the notebooks):

* ``book/_generated/chapters.md`` (included on the front page): one row per chapter: number and
  short title, the paper, the headline verdict declared with ``claims.declare_verdict``, the checks of
  kind ``reproduction`` passed/total, the other checks passed/total, the seeds at which every check
  holds, and the runtime;
* ``book/_generated/ledger.md`` (the "Claims ledger" page): every claim check, grouped by chapter, with
  its kind, prediction, measurement, tolerance and verdict at seeds 0, 1 and 2;
* ``book/_generated/status.md``: when, where and with which versions each chapter was executed.

Seed 0 is read from the ``PASS | kind | ...`` lines that :func:`paperlib.core.claims.check_claim` printed
into the committed ``.ipynb``; seeds 1 and 2, the runtime and the machine from the notebook metadata
that ``tools/regenerate.py`` records under ``executable_theory``.
"""

from __future__ import annotations

import re
import json
from pathlib import Path

import nbformat
import yaml

from paperlib.core.claims import ClaimResult, parse_claim_line, parse_verdict_line

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "book" / "chapters"
GENERATED = ROOT / "book" / "_generated"
META_KEY = "executable_theory"
EXTRA_SEEDS = ("1", "2")
_CITE = re.compile(r"\{cite:[tp]\}`([^`,]+)")


def _toc_entries() -> list[dict]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [
        ch
        for part in toc.get("parts", [])
        for ch in part.get("chapters", [])
        if ch["file"].startswith("book/chapters/")
    ]


def toc_chapters() -> list[str]:
    """Chapter slugs in reading order, from ``_toc.yml``."""
    return [ch["file"].split("/")[-1] for ch in _toc_entries()]


def _read(path: Path):
    return nbformat.read(path, as_version=4)


def _stdout_lines(nb) -> list[str]:
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stdout":
                t = o.get("text", "")
                out += (t if isinstance(t, str) else "".join(t)).splitlines()
    return out


def claims_in_notebook(path: Path) -> list[ClaimResult]:
    """Every claim line printed to stdout in the notebook's stored outputs, in order."""
    return [r for r in map(parse_claim_line, _stdout_lines(_read(path))) if r is not None]


def verdicts_in_notebook(path: Path) -> list:
    """Every ``VERDICT | ...`` line printed by ``claims.declare_verdict``, in order."""
    return [v for v in map(parse_verdict_line, _stdout_lines(_read(path))) if v is not None]


def chapter_meta(path: Path) -> dict:
    """The provenance ``tools/regenerate.py`` recorded in the notebook (``{}`` if none)."""
    return dict(_read(path).metadata.get(META_KEY, {}))


def chapter_title(path: Path) -> str:
    """The chapter's H1 (its finding), from the notebook."""
    for cell in _read(path).cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return path.stem


def short_title(slug: str) -> str:
    """The sidebar title from ``_toc.yml`` (``title:``), else the H1."""
    for ch in _toc_entries():
        if ch["file"].split("/")[-1] == slug:
            return ch.get("title") or chapter_title(CHAPTERS / f"{slug}.ipynb")
    raise ValueError(f"slug: {slug!r} is not in _toc.yml")


def paper_key(path: Path) -> str | None:
    """The bibtex key of the chapter's paper: the first citation in the notebook's text."""
    for cell in _read(path).cells:
        if cell.cell_type == "markdown":
            m = _CITE.search(cell.source)
            if m:
                return m.group(1).strip()
    return None


def seed_verdicts(path: Path) -> dict[str, list[bool | None]]:
    """Per seed ("0", "1", "2"), the verdict of each seed-0 claim check, in order.

    ``None`` marks a check that a seed's run did not reach, or a seed whose record is missing or was
    measured on other inputs than the committed outputs (stale).
    """
    seed0 = claims_in_notebook(path)
    meta = chapter_meta(path)
    out: dict[str, list[bool | None]] = {"0": [r.passed for r in seed0]}
    for s in EXTRA_SEEDS:
        rec = meta.get("seeds", {}).get(s)
        if not rec or rec.get("digest") != meta.get("digest"):
            out[s] = [None] * len(seed0)
            continue
        pool = [(c["kind"], c["claim"], c["passed"]) for c in rec.get("claims", [])]
        row: list[bool | None] = []
        for r in seed0:
            hit = next((i for i, (k, c, _) in enumerate(pool) if k == r.kind and c == r.claim), None)
            row.append(None if hit is None else pool.pop(hit)[2])
        out[s] = row
    return out


NULLS = ROOT / "book" / "_generated" / "nulls"
#: Kinds that must name a null variant they reject (issue 26; paperlib.core.nulls).
NULL_KINDS = ("reproduction", "derived")


def null_record(slug: str) -> dict | None:
    """The chapter's null-run record (``tools/nulls.py --write``), or None when absent or stale."""
    import freshness

    path = NULLS / f"{slug}.json"
    if not path.exists():
        return None
    rec = json.loads(path.read_text())
    if freshness.stale_inputs(rec.get("inputs", {}), freshness.input_hashes(slug)):
        return None
    return rec


def null_results(rec: dict | None, claim: str) -> list[tuple[str, str | None, bool | None]]:
    """``(variant, measured, passed)`` for each variant ``claim`` names (``rejects``) in ``rec``."""
    if not rec:
        return []
    names: list[str] = []
    for run in rec.get("runs", {}).values():
        for c in run.get("claims", []):
            if c["claim"] == claim and c.get("rejects"):
                names = list(c["rejects"])
                break
        if names:
            break
    out = []
    for v in names:
        got = [c for c in rec["runs"].get(v, {}).get("claims", []) if c["claim"] == claim]
        out.append((v, got[0]["measured"] if got else None, None if not got else all(c["passed"] for c in got)))
    return out


def rejects_cell(r: ClaimResult, rec: dict | None, pending: bool) -> str:
    """The ledger's "rejects" entry of one check: each named null with its value and verdict."""
    res = null_results(rec, r.claim)
    if res:
        return "; ".join(f"{v} {m if m is not None else 'not reached'} "
                         f"{'FAIL' if p is False else 'PASS' if p else '?'}" for v, m, p in res)
    if r.kind not in NULL_KINDS:
        return ""
    return "not registered yet" if pending or rec is None else "**none registered**"


def nulls_rejected(claims: list[ClaimResult], rec: dict | None) -> tuple[int, int]:
    """(checks of kind reproduction/derived that FAIL under every null they name (at least one), all such checks)."""
    need = [r for r in claims if r.kind in NULL_KINDS]
    ok = 0
    for r in need:
        res = null_results(rec, r.claim)
        ok += bool(res) and all(p is False for _, _, p in res)
    return ok, len(need)


def _esc(s: str) -> str:
    return s.replace("|", "\\|")


#: Numbers a browser may break at their dash (``1e-09``, ``-0.38``): kept whole by a no-wrap span.
_DASHED_NUMBER = re.compile(r"(?<![\w.\-])(-?\d[\d.]*[eE][-+]?\d+|-\d[\d.]*\d|-\d)")


def nobreak(text: str) -> str:
    """Wrap the numbers of ``text`` that contain a dash in ``<span class="nowrap">`` (MyST passes inline HTML)."""
    return _DASHED_NUMBER.sub(r'<span class="nowrap">\1</span>', text)


def _cell(text: str) -> str:
    return nobreak(_esc(text))


def pretty(text: str) -> str:
    """Reader-facing verdict text: ASCII comparisons as symbols (``h >= D`` -> ``h ≥ D``)."""
    return text.replace(" <= ", " ≤ ").replace(" >= ", " ≥ ").replace(" != ", " ≠ ")


def _mark(v: bool | None) -> str:
    return "PASS" if v is True else "**FAIL**" if v is False else "not run"


def _seeds_holding(sv: dict[str, list[bool | None]]) -> str:
    ok = [s for s, row in sv.items() if row and all(v is True for v in row)]
    return ", ".join(ok) if ok else "none"


def _runtime(meta: dict) -> str:
    secs = meta.get("run", {}).get("seconds")
    return f"{secs:.0f} s" if isinstance(secs, (int, float)) else "not recorded"


def _badge(verdict: str) -> str:
    return f'<span class="verdict-badge verdict-badge-{verdict.replace(" ", "-")}">{verdict}</span>'


def _checks_cell(claims: list[ClaimResult], sv: dict[str, list[bool | None]]) -> str:
    repro = [r for r in claims if r.kind == "reproduction"]
    other = [r for r in claims if r.kind != "reproduction"]
    seeds = _seeds_holding(sv)
    seeds = "0\u20132" if seeds == "0, 1, 2" else seeds
    return (f"{sum(r.passed for r in repro)}/{len(repro)} reproductions \u00b7 "
            f"{sum(r.passed for r in other)}/{len(other)} other \u00b7 "
            + ("seeds " + seeds if seeds != "none" else "no seed where all hold"))


def nulls_sentence(claims: list[ClaimResult], rec: dict | None) -> str:
    """The front page's per-chapter null statement (inside the verdict disclosure, so rows stay one screen tall)."""
    k, n = nulls_rejected(claims, rec)
    if n == 0:
        return ""
    if rec is None:
        return " Null variants: not registered yet."
    return f" Reproduction and derived checks shown to reject a registered null: {k} of {n}."


def summary_line(rows: list[dict]) -> str:
    """The front page's one-line summary: verdict counts and the seeds at which the checks hold."""
    n = len(rows)
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("reproduced", "partly", "not reproduced")}
    undeclared = n - sum(counts.values())
    checks = sum(len(r["claims"]) for r in rows)
    passed = sum(r.passed for row in rows for r in row["claims"])
    all_seeds = [r for r in rows if _seeds_holding(r["sv"]) == ", ".join(("0",) + EXTRA_SEEDS)]
    seeds = ", ".join(("0",) + EXTRA_SEEDS[:-1]) + f" and {EXTRA_SEEDS[-1]}"
    rest = [f"chapter {r['number']}: {_seeds_holding(r['sv'])}" for r in rows if r not in all_seeds]
    return (
        f"**{n} chapter{'s' if n != 1 else ''}: {counts['reproduced']} reproduced, {counts['partly']} partly, "
        f"{counts['not reproduced']} not reproduced"
        + (f", {undeclared} without a verdict" if undeclared else "") + ".** "
        f"{passed} of {checks} claim checks pass at seed 0; every check holds at seeds {seeds} in "
        f"{len(all_seeds)} of {n} chapters"
        + (f" (seeds where all hold in the others: {'; '.join(rest)})" if rest else "") + "."
    )


def chapters_markdown() -> str:
    """The front page's summary line and compact one-row-per-chapter table (number, chapter, verdict badge with
    the paper and what is missing behind a disclosure, checks), then the total runtime."""
    table = ["| # | chapter | verdict | checks |", "|---|---|---|---|"]
    rows = []
    for number, slug in enumerate(toc_chapters(), 1):
        ipynb = CHAPTERS / f"{slug}.ipynb"
        if not ipynb.exists():
            continue
        claims = claims_in_notebook(ipynb)
        verdicts = verdicts_in_notebook(ipynb)
        sv = seed_verdicts(ipynb)
        verdict = verdicts[-1].verdict if verdicts else "not declared"
        rows.append({"number": number, "verdict": verdict, "claims": claims, "sv": sv})
        key = paper_key(ipynb)
        paper = f"{{cite:t}}`{key}`" if key else "paper not cited"
        if verdicts and verdicts[-1].missing != "-":
            detail = f"{paper}. Not reproduced: {_esc(pretty(verdicts[-1].missing))}"
        else:
            detail = f"{paper}." + (" Its headline claim holds in our experiment." if verdicts else "")
        detail += nulls_sentence(claims, null_record(slug))
        cell = (f'<details class="verdict-details"><summary>{_badge(verdict)}</summary>'
                f"{detail}</details>")
        table.append(
            f"| {number} | {{doc}}`{_esc(short_title(slug))} <chapters/{slug}>` | {cell} | "
            f"{_checks_cell(claims, sv)} |"
        )
    runs = [chapter_meta(CHAPTERS / f"{slug}.ipynb").get("run", {})
            for slug in toc_chapters() if (CHAPTERS / f"{slug}.ipynb").exists()]
    secs = [run.get("seconds") for run in runs]
    recorded = [x for x in secs if isinstance(x, (int, float))]
    refs = [x for x in (run.get("reference_seconds") for run in runs) if isinstance(x, (int, float))]
    span = "" if not refs else f"{min(refs):.2f} s" if min(refs) == max(refs) else f"{min(refs):.2f}-{max(refs):.2f} s"
    speed = (f" The reference workload of the {{doc}}`status` page, timed in {len(refs)} of these {len(secs)} "
             f"runs, took {span}." if refs else "")
    total = (
        f"\nThe whole book, executed one chapter after another on the machine of each chapter's record: "
        f"{sum(recorded):.0f} s ({sum(recorded) / 60:.1f} min) over {len(recorded)} of {len(secs)} chapters"
        f"{' (budget: 600 s)' if len(recorded) == len(secs) else '; the other chapters have no recorded runtime'}."
        f"{speed}\n"
    )
    return (
        "<!-- generated by tools/ledger.py from the executed chapters; do not edit by hand -->\n\n"
        "```{container} book-summary\n" + summary_line(rows) + "\n```\n\n"
        "````{container} chapter-table\n" + "\n".join(table) + "\n````\n"
        + total
    )


def ledger_markdown() -> str:
    """Every claim check of every chapter, grouped by chapter, with its verdict at each seed."""
    parts = ["<!-- generated by tools/ledger.py from the executed chapters; do not edit by hand -->", ""]
    for number, slug in enumerate(toc_chapters(), 1):
        ipynb = CHAPTERS / f"{slug}.ipynb"
        if not ipynb.exists():
            continue
        claims = claims_in_notebook(ipynb)
        sv = seed_verdicts(ipynb)
        rec = null_record(slug)
        k, n = nulls_rejected(claims, rec)
        nulls = ("no reproduction or derived checks" if n == 0 else
                 f"{k} of {n} reproduction and derived checks shown to reject a registered null "
                 f"(`make nulls`)" if rec else "null variants not registered yet (issue 26)")
        parts += [
            f"## {number}. {short_title(slug)}",
            "",
            f"{{doc}}`Read the chapter <chapters/{slug}>`; executed in {_runtime(chapter_meta(ipynb))}; {nulls}.",
            "",
            "````{container} ledger-table",
            "| kind | claim | prediction | measured (seed 0) | tolerance | seed 0 | seed 1 | seed 2 | rejects (null: value, verdict) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for j, r in enumerate(claims):
            parts.append(
                f"| {r.kind} | {_cell(r.claim)} | {_esc(r.predicted)} | {_esc(r.measured)} | "
                f"{_esc(r.tolerance)} | " + " | ".join(_mark(sv[s][j]) for s in ("0", "1", "2"))
                + f" | {nobreak(_esc(rejects_cell(r, rec, rec is None)))} |"
            )
        parts += ["````", ""]
    return "\n".join(parts)


def status_markdown() -> str:
    lines = [
        "<!-- generated by tools/ledger.py from the notebooks' recorded runs; do not edit by hand -->",
        "",
        "| chapter | execution time | reference workload | reference units | measured on | date | Python | jax | numpy |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    versions: dict[str, str] = {}
    for slug in toc_chapters():
        ipynb = CHAPTERS / f"{slug}.ipynb"
        run = chapter_meta(ipynb).get("run") if ipynb.exists() else None
        if not run:
            lines.append(f"| {{doc}}`chapters/{slug}` | not recorded | | | | | | | |")
            continue
        v = run.get("versions", {})
        versions.update(v)
        ref = run.get("reference_seconds")
        timed = isinstance(ref, (int, float)) and ref > 0
        units = f"{run['seconds'] / ref:.1f}" if timed else "-"
        lines.append(
            f"| {{doc}}`chapters/{slug}` | {run['seconds']:.1f} s | {f'{ref:.2f} s' if timed else 'not timed'} | "
            f"{units} | {run['machine']} | {run['date']} | "
            f"{v.get('python', '?')} | {v.get('jax', '?')} | {v.get('numpy', '?')} |"
        )
    if versions:
        lines += ["", "Package versions of the most recent regeneration:", ""]
        lines += [f"- {k}: {versions[k]}" for k in sorted(versions)]
    return "\n".join(lines) + "\n"


PAGES = {"chapters.md": chapters_markdown, "ledger.md": ledger_markdown, "status.md": status_markdown}


def write_pages() -> None:
    GENERATED.mkdir(parents=True, exist_ok=True)
    for name, make in PAGES.items():
        (GENERATED / name).write_text(make())


if __name__ == "__main__":
    write_pages()
