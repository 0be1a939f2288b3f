"""The portable output comparison (tools/nbval_portable.py): what passes across machines and what is still caught.

The last class of tests runs ``pytest --nbval`` on a small notebook whose stored outputs were forged, to show
that the comparison nbval uses in ``make test`` still catches a forged number, a forged verdict, changed text
and a lost output, and passes a number that moved within its printed rounding.
"""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import nbval_portable as P  # noqa: E402

CLAIM = "PASS | reproduction | slope of the error | measured {} | predicted -0.5 | tolerance 0.1"
STRUCTURE = P.Policy("structure", reason="an Adam training trajectory: last bits grow over 3000 steps")


@pytest.mark.parametrize(
    "a, b",
    [
        ("loss 0.310", "loss 0.311"),  # a rounding flip in the last printed digit
        ("loss 0.310", "loss 0.312"),  # two units
        ("x = 1.2346e-05", "x = 1.2347e-05"),
        ("ratio 0.31234567891234", "ratio 0.31234568"),  # a full repr within the relative 1e-6
        ("  a    0.310\n  bb   0.32", "  a  0.311\n  bb   0.32"),  # a re-padded column
        ("-0.00", "0.00"),
        ("nan", "nan"),
        (CLAIM.format("-0.512"), CLAIM.format("-0.513")),
    ],
)
def test_default_policy_accepts_last_digit_noise(a, b):
    assert P.compare_text(a, b).ok


@pytest.mark.parametrize(
    "a, b",
    [
        ("loss 0.310", "loss 0.313"),  # three units: beyond the default
        ("GAP beats NPM in 14 of 21 runs", "GAP beats NPM in 15 of 21 runs"),  # integers are exact
        ("GAP beats NPM", "NPM beats GAP"),  # text
        ("loss 0.310", "loss 0.310 (diverged)"),
        ("a\nb", "a"),  # lines
        ("loss 0.310", "loss nan"),
        (CLAIM.format("-0.512"), CLAIM.format("-0.530")),
        (CLAIM.format("-0.512"), CLAIM.replace("PASS", "FAIL").format("-0.512")),  # forged verdict
        (CLAIM.format("-0.512"), CLAIM.replace("reproduction", "derived").format("-0.512")),  # kind
        (CLAIM.format("-0.512"), CLAIM.replace("error", "errors").format("-0.512")),  # claim text
        ("VERDICT | partly | x", "VERDICT | reproduced | x"),
        ("r_q10 = 0.5", "r_q11 = 0.5"),  # digits inside names are text
    ],
)
def test_default_policy_catches_real_differences(a, b):
    res = P.compare_text(a, b)
    assert not res.ok and not res.default_ok
    assert res.difference is not None and str(res.difference)


def test_structure_policy_ignores_numbers_but_not_verdicts_or_text():
    assert P.compare_text("final loss 0.310, 14 of 21", "final loss 0.297, 17 of 21", STRUCTURE).ok
    res = P.compare_text("final loss 0.310", "final loss 0.297", STRUCTURE)
    assert res.ok and not res.default_ok  # reported as "needed"
    assert not P.compare_text(CLAIM.format("-0.5"), CLAIM.replace("PASS", "FAIL").format("-0.9"), STRUCTURE).ok
    assert not P.compare_text("GAP wins", "NPM wins", STRUCTURE).ok
    assert not P.compare_text("loss 0.3", "loss 0.3 0.4", STRUCTURE).ok  # one more number


def test_stated_tolerance():
    pol = P.Policy(rtol=0.05, reason="an optimiser stopped by a tolerance: its last steps move")
    assert P.compare_text("gap 1.00", "gap 1.04", pol).ok
    assert not P.compare_text("gap 1.00", "gap 1.08", pol).ok
    assert P.numbers_agree("100", "104", pol) and not P.numbers_agree("100", "106", pol)


@pytest.mark.parametrize(
    "meta, error",
    [
        ({"portable": {"compare": "structure"}}, "reason"),
        ({"portable": {"compare": "structure", "reason": "noise"}}, "reason"),
        ({"portable": {"compare": "everything", "reason": "a long enough reason"}}, "compare"),
        ({"portable": {"rtol": -0.1, "reason": "a long enough reason"}}, "rtol"),
        ({"portable": {"rtol": True, "reason": "a long enough reason"}}, "rtol"),
        ({"portable": {"atol": float("nan"), "reason": "a long enough reason"}}, "atol"),
        ({"portable": {"rtol": 0.1, "reason": "a long enough reason", "why": 1}}, "unknown"),
        ({"portable": {"reason": "a long enough reason"}}, "loosen"),
        ({"portable": "structure"}, "mapping"),
    ],
)
def test_malformed_declarations_are_refused(meta, error):
    with pytest.raises(ValueError, match=error):
        P.policy_of(meta)


def test_policy_of_default_and_declared():
    assert P.policy_of({}) == P.DEFAULT and not P.DEFAULT.loose
    pol = P.policy_of({"portable": {"compare": "structure", "reason": "training run of 3000 Adam steps"}})
    assert pol.loose and pol.mode == "structure"


def test_last_digit_unit():
    assert P.last_digit_unit("0.310") == pytest.approx(1e-3)
    assert P.last_digit_unit("12") == 1
    assert P.last_digit_unit("1.25e-04") == pytest.approx(1e-6)
    assert P.last_digit_unit("3e5") == pytest.approx(1e5)


# ------------------------------------------------------------------------- nbval end to end

SOURCE = 'print("final loss", 0.3104)\nprint("' + CLAIM.format("-0.512") + '")'
LOOSE = {"portable": {"compare": "structure", "reason": "a training run: numbers move between machines"}}
#: (stored output, cell metadata, whether nbval must pass the cell); every cell runs SOURCE.
CASES = [
    ("final loss 0.3104\n" + CLAIM.format("-0.512") + "\n", {}, True),  # as computed
    ("final loss 0.3105\n" + CLAIM.format("-0.512") + "\n", {}, True),  # one unit off: another machine
    ("final loss 0.3204\n" + CLAIM.format("-0.512") + "\n", {}, False),  # forged number
    ("final loss 0.3104\n" + CLAIM.replace("PASS", "FAIL").format("-0.512") + "\n", {}, False),  # forged verdict
    ("final loss 0.3104\n", {}, False),  # a lost line
    ("final loss 0.2904\n" + CLAIM.format("-0.498") + "\n", LOOSE, True),  # declared loose, and needed
    ("final loss 0.2904\n" + CLAIM.replace("PASS", "FAIL").format("-0.498") + "\n", LOOSE, False),
]


@pytest.fixture(scope="module")
def nbval_run(tmp_path_factory):
    """One ``pytest --nbval`` run over a notebook with one cell per case (a kernel start is seconds)."""
    path = tmp_path_factory.mktemp("nbval") / "chapter.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for k, (stored, meta, _) in enumerate(CASES, 1):
        cell = nbformat.v4.new_code_cell(SOURCE, metadata=meta)
        cell.execution_count = k
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=stored)]
        nb.cells.append(cell)
    nbformat.write(nb, path)
    env = {"PYTHONPATH": str(ROOT / "tools"), "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "nbval_portable", "--nbval", "-rA",
         "--rootdir", str(path.parent), str(path)],
        capture_output=True, text=True, env=env, cwd=path.parent, timeout=300,
    )


@pytest.mark.parametrize("k", range(len(CASES)))
def test_nbval_uses_the_portable_comparison(nbval_run, k):
    passes = CASES[k][2]
    line = f"{'PASSED' if passes else 'FAILED'} chapter.ipynb::Cell {k}"
    assert line in nbval_run.stdout, nbval_run.stdout[-4000:] + nbval_run.stderr[-2000:]


def test_nbval_reports_a_declared_loose_cell(nbval_run):
    out = nbval_run.stdout
    assert "1 cells declared a loose comparison" in out and "NEEDED  chapter.ipynb::Cell 5" in out, out[-4000:]
    assert "a training run" in out


def test_a_declaration_does_not_make_outputs_stale(tmp_path):
    """Adding a measured 'portable' declaration to a cell changes nothing the chapter computes: the freshness
    digest ignores it (tools/freshness.py), while any change to the source still counts."""
    import freshness
    import jupytext

    src = (ROOT / "book" / "chapters" / "fedexprox.md").read_text()
    nb = jupytext.reads(src, fmt="md:myst")
    plain = tmp_path / "a.md"
    plain.write_text(src)
    code = [c for c in nb.cells if c.cell_type == "code"][2]
    code.metadata["portable"] = {"compare": "structure", "reason": "a training run's numbers move"}
    declared = tmp_path / "b.md"
    declared.write_text(jupytext.writes(nb, fmt="md:myst"))
    assert "portable:" in declared.read_text()
    assert freshness._chapter_bytes(plain) == freshness._chapter_bytes(declared)
    code.source += "\nprint(1)"
    edited = tmp_path / "c.md"
    edited.write_text(jupytext.writes(nb, fmt="md:myst"))
    assert freshness._chapter_bytes(edited) != freshness._chapter_bytes(plain)
