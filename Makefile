# Quick start (a fresh machine with Python 3.11 and Node 20):
#   make demo   — run the project's own features against the bundled demo server; writes the report
#   make test   — run the whole test suite (what CI runs)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast test-stress lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	touch node_modules/.installed

# The report's path goes by name (-D mcp_bdd.report): behave pairs the n-th -o with the n-th -f,
# so `-f pretty -f living-doc -o FILE` would send the console to FILE.
demo: $(STAMP)
	@mkdir -p reports
	$(BIN)/behave -D "mcp_bdd.title=Demo shop MCP server" -D mcp_bdd.report=reports/living-doc.html \
	    -f pretty -f living-doc features/
	@echo "Living documentation: file://$(CURDIR)/reports/living-doc.html"

# pytest's workers: one more than the CPUs, since about a third of the suite's time is spent
# waiting (for servers to start and stop, timeouts and graces that faults must wait out).
JOBS ?= $(shell echo $$(( $$(getconf _NPROCESSORS_ONLN) + 1 )))

# compileall: where PYTHONDONTWRITEBYTECODE is set (CI images often set it), no process writes the
# bytecode of this clone's own modules, so each of the several hundred Python processes the suite
# starts (behave, servers) compiled them again. They are compiled once, here, instead.
test: $(STAMP) node_modules/.installed
	$(BIN)/ruff check mcp_bdd tests demo benchmarks
	$(BIN)/mypy
	$(BIN)/python -m compileall -q mcp_bdd demo tests
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal -q

# The unit lane: no process, no behave run (tests/unit/conftest.py refuses both), in seconds.
test-fast: $(STAMP)
	$(BIN)/ruff check mcp_bdd tests demo benchmarks
	$(BIN)/python -m pytest -q tests/unit

# The suite five times in a row with two CPU busy-loops beside it (a test that fails under load is
# a defect). The busy-loops are this shell's own children, stopped by PID when the runs end.
test-stress: $(STAMP) node_modules/.installed
	@set -e; yes >/dev/null & a=$$!; yes >/dev/null & b=$$!; \
	trap 'kill $$a $$b 2>/dev/null' EXIT; \
	for i in 1 2 3 4 5; do echo "== stress run $$i/5"; $(MAKE) --no-print-directory test; done

bench: $(STAMP)
	$(BIN)/python benchmarks/scale.py
	$(BIN)/python benchmarks/report_scale.py --own-features
	$(BIN)/python benchmarks/stdio_framing.py

clean:
	rm -rf $(VENV) node_modules reports .pytest_cache .mypy_cache
