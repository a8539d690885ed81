# streamkit developer commands. `make demo` and `make test` are the two the README promises.
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
PORT    ?= 8000

.PHONY: demo test test-fast install install-demo lint typecheck system-deps js examples-js bench frontend clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test,demo]'

install-demo: $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[demo]'

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

## frontend: rebuild the demo page into streamkit/demo/static
frontend:
	cd demo_frontend && npm ci --no-audit --no-fund && npm run build

clean:
	rm -rf $(VENV) tests/js/node_modules demo_frontend/node_modules examples/*/node_modules examples/*/.next
