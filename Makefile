# Executable Theory: every command a reader or CI needs. `make help` lists them.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PYTEST_NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout 300
export JAX_PLATFORMS ?= cpu

.PHONY: help venv book test unit nbval browser-test regenerate ledger lock clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(BIN)/jupyter-book: requirements.txt pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt
	touch $@

venv: $(BIN)/jupyter-book  ## create .venv with the pinned environment (requirements.txt)

book: venv  ## build the HTML book into _build/html (strict: warnings are errors)
	$(BIN)/jupyter-book build . -W -n --keep-going

test: venv  ## unit tests, the notebook gate, the Colab simulation and strict nbval of every chapter
	$(BIN)/python -m pytest -p no:cacheprovider tests book/chapters --ignore=tests/browser $(PYTEST_NBVAL) --durations=12

unit: venv  ## only the fast tests of lib/ and the notebook gate (no notebook execution)
	$(BIN)/python -m pytest -q -p no:cacheprovider tests --ignore=tests/browser --deselect tests/test_colab_simulation.py

browser-test: venv  ## drive headless Chromium over the built book (needs `make book` and Debian's chromium)
	$(BIN)/python -m pytest -p no:cacheprovider -v tests/browser

regenerate: venv  ## re-execute chapters and rewrite outputs, ledger and status: make regenerate [CHAPTERS="a b"]
	$(BIN)/python tools/regenerate.py $(CHAPTERS)

ledger: venv  ## rewrite the claims ledger and status page from the committed notebooks
	$(BIN)/python tools/ledger.py

lock:  ## refresh requirements.txt from the current .venv
	{ sed -n '1,3p' requirements.txt; $(BIN)/python -m pip freeze --exclude-editable | grep -viE '^(paperlib|pip|setuptools|wheel)(==| )'; echo '-e .'; } > requirements.txt.new && mv requirements.txt.new requirements.txt

clean:  ## remove the built book
	rm -rf _build
