# streamkit developer commands. `make demo` and `make test` are the two the README promises.
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
PORT    ?= 8000
DOCS_PORT ?= 8001

.PHONY: demo test test-fast install install-demo install-docs lint typecheck system-deps js examples-js bench frontend docs docs-build clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test,demo,docs]'

install-demo: $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[demo]'

install-docs: $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[docs]'

tests/js/node_modules: tests/js/package-lock.json
	cd tests/js && npm ci --no-audit --no-fund
	touch tests/js/node_modules

js: tests/js/node_modules

examples/%/node_modules: examples/%/package-lock.json
	cd examples/$* && npm ci --no-audit --no-fund
	touch examples/$*/node_modules

examples-js: examples/nextjs-usechat/node_modules examples/nextjs-copilotkit/node_modules

## demo: run the demo app (offline scripted agent, no API key) on http://127.0.0.1:$(PORT)
demo: install-demo
	$(BIN)/streamkit demo --port $(PORT)

## system-deps: Debian's redis-server and chromium for the tests (apt-get as root, else the exact command)
system-deps:
	@bash scripts/system-deps.sh

## test: install everything and run the whole suite (Python, real JS clients, browser)
test: system-deps install js examples-js
	$(BIN)/ruff check streamkit tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest

## test-fast: lint, typecheck and the Python tests that need neither node, a browser nor a Next.js build
test-fast: install
	$(BIN)/ruff check streamkit tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -m "not node and not browser and not nextjs"

lint: install
	$(BIN)/ruff check streamkit tests bench

typecheck: install
	$(BIN)/mypy

## bench: the performance benchmarks (not part of the tests)
bench: install
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python -m bench

## docs: serve the documentation site with live reload on http://127.0.0.1:$(DOCS_PORT)
docs: install-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs serve --dev-addr 127.0.0.1:$(DOCS_PORT)

## docs-build: build the documentation site into site/ in strict mode (a broken link or reference fails it)
docs-build: install-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

## frontend: rebuild the demo page into streamkit/demo/static
frontend:
	cd demo_frontend && npm ci --no-audit --no-fund && npm run build

clean:
	rm -rf $(VENV) site tests/js/node_modules demo_frontend/node_modules examples/*/node_modules examples/*/.next
