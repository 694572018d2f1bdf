# crdkit developer commands. `make test` and `make demo` work on a fresh clone and are safe to
# re-run: each step leaves a stamp and is skipped until its inputs change.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin

# Slow caches live outside the clone so repeat runs (and other clones) reuse them.
CACHE_ROOT ?= $(HOME)/.cache/crdkit
export CARGO_TARGET_DIR ?= $(CACHE_ROOT)/cargo-target
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export PYO3_PYTHON := $(abspath $(PY))
# CI runs the thorough hypothesis profile; local runs the quick one.
export HYPOTHESIS_PROFILE ?= $(if $(CI),ci,dev)

RUST_SOURCES := Cargo.toml $(wildcard Cargo.lock) rust/placer/Cargo.toml $(shell find rust -name '*.rs' 2>/dev/null)
# Python sources and the package data that ships beside them (crdkit init's templates, the
# scheduler page's assets).
PY_SOURCES := $(shell find python -name '*.py' -o -name '*.pyi' -o -name '*.tmpl' -o -name '*.html' -o -name '*.js' -o -name '*.css' 2>/dev/null)

.PHONY: help dev ext envtest browser lint typecheck rust-check pytest wheel-check docs test test-under-load demo wheels clean

help:
	@echo "make test   - install everything into .venv, build, lint, type-check and run every test"
	@echo "make demo   - run the gang-scheduling example on a simulated GPU cluster (ARGS=--ui: its live page)"
	@echo "make test-under-load - make test with two CPU-bound processes running beside it"
	@echo "make dev    - only create .venv with the package (editable) and the dev tools"
	@echo "make docs   - build the documentation site (mkdocs --strict) into $(DOCS_SITE)"
	@echo "make wheels - abi3 wheels for Linux x86_64 and aarch64 and the sdist, into dist/wheels"

$(PY):
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "crdkit needs Python 3.11 or newer"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Editable install with the dev extras; it also builds the extension once.
$(VENV)/.stamp-deps: pyproject.toml | $(PY)
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# Rebuild the extension in place when the Rust sources change.
$(VENV)/.stamp-ext: $(VENV)/.stamp-deps $(RUST_SOURCES)
	$(BIN)/maturin develop -q --release --skip-install
	touch $@

dev: $(VENV)/.stamp-ext
ext: $(VENV)/.stamp-ext

envtest:
	bash tools/envtest/build.sh

# The scheduler page's browser tests drive the distribution's headless Chromium. As root with
# apt-get it is installed when missing; otherwise one line says what is missing, and those
# tests skip with the same line (tests/_browser.py).
BROWSER_MISSING = $(strip $(if $(shell command -v chromium),,chromium) $(if $(shell command -v chromedriver),,chromium-driver))
browser:
	@missing="$(BROWSER_MISSING)"; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null && apt-get install -y -q chromium chromium-driver >/dev/null)) || true; \
	  missing="$$(command -v chromium >/dev/null || echo chromium) $$(command -v chromedriver >/dev/null || echo chromium-driver)"; \
	  missing="$$(echo $$missing)"; \
	fi; \
	if [ -n "$$missing" ]; then \
	  echo "browser tests skip: $$(echo $$missing | sed 's/ / and /') missing (as root: apt-get install -y chromium chromium-driver)"; \
	fi

lint: dev
	$(BIN)/ruff check python tests benches examples tools

typecheck: dev
	$(BIN)/mypy --strict python/crdkit tools/check_wheels.py
	$(PY) -m mypy.stubtest crdkit._placer

rust-check: dev
	cargo clippy -q --all-targets -- -D warnings
	cargo clippy -q --all-targets --features python -- -D warnings
	cargo test -q

# The wheel of `pip install .` must install into a brand-new virtual environment and import. It
# is kept in $(WHEEL_CHECK_DIR): the test of `crdkit init` installs it into a new project.
WHEEL_CHECK_DIR := $(VENV)/wheel-check
$(VENV)/.stamp-wheel: pyproject.toml $(RUST_SOURCES) $(PY_SOURCES) | $(PY)
	rm -rf $(WHEEL_CHECK_DIR)
	$(BIN)/pip wheel -q --no-deps --wheel-dir $(WHEEL_CHECK_DIR) .
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(PYTHON) -m venv "$$tmp/venv" && \
	"$$tmp/venv/bin/pip" install -q $(WHEEL_CHECK_DIR)/crdkit-*.whl && \
	(cd "$$tmp" && "$$tmp/venv/bin/python" -c 'import crdkit, crdkit._placer; from crdkit.scheduling.groups.crds import pod_group_crds; assert len(pod_group_crds()) == 2, "the PodGroup CRDs are not in the wheel"; from crdkit.deploy.scaffold.templates import project_files; from crdkit.deploy.scaffold.names import project_names; assert project_files(project_names("probe")), "crdkit init has no templates"; import importlib.resources as r; assert all(r.files("crdkit.scheduling.ui").joinpath("assets", f).is_file() for f in ("index.html", "app.js", "app.css")), "the scheduler page is not in the wheel"; print("wheel imports:", crdkit.__version__)')
	touch $@

wheel-check: $(VENV)/.stamp-wheel

# Wheels users install without a Rust toolchain: one abi3 wheel per architecture serves every
# CPython >= 3.11. zig (from PyPI) is the cross linker and pins glibc to manylinux2014, so the
# wheels also run on distributions older than the build machine.
WHEEL_TARGETS ?= x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu
WHEEL_DIR ?= dist/wheels
wheels: dev
	$(BIN)/pip install -q 'ziglang>=0.13'
	rm -rf $(WHEEL_DIR)
	for target in $(WHEEL_TARGETS); do \
	  rustup target add "$$target" >/dev/null 2>&1 || rustup target list --installed | grep -qx "$$target"; \
	  PATH="$(abspath $(BIN)):$$PATH" $(BIN)/maturin build -q --release --strip --zig \
	    --compatibility manylinux2014 --target "$$target" --out $(WHEEL_DIR); \
	done
	$(BIN)/maturin sdist --out $(WHEEL_DIR)
	$(PY) tools/check_wheels.py $(WHEEL_DIR) $(foreach t,$(WHEEL_TARGETS),--expect $(firstword $(subst -, ,$(t))))
	# The wheel of this machine's architecture must install into a fresh venv and import.
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(PYTHON) -m venv "$$tmp/venv" && \
	"$$tmp/venv/bin/pip" install -q --no-index --find-links $(WHEEL_DIR) --only-binary :all: \
	  --no-deps crdkit && \
	"$$tmp/venv/bin/pip" install -q crdkit && \
	(cd "$$tmp" && "$$tmp/venv/bin/python" -c 'import crdkit._placer, crdkit.placer; print("wheel imports:", crdkit.__version__, crdkit._placer.__file__)')

pytest: dev envtest browser wheel-check
	CRDKIT_WHEEL_DIR=$(abspath $(WHEEL_CHECK_DIR)) $(BIN)/pytest

# The documentation site (docs/, mkdocs.yml); --strict fails on any warning, a broken link or
# anchor included. The API pages are read from python/ statically, so no import is needed.
DOCS_SITE ?= $(CACHE_ROOT)/site
docs: dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $(DOCS_SITE)

test: lint typecheck rust-check wheel-check docs pytest

# The whole `make test` with two CPU-bound processes beside it: no test may need a quiet machine.
test-under-load:
	bash tools/under-load.sh $(MAKE) test

demo: dev envtest $(VENV)/.stamp-examples
	$(PY) -m examples.demo $(ARGS)

# The example extras (Pillow for the topology picture), only for `make demo`.
$(VENV)/.stamp-examples: pyproject.toml | $(PY)
	$(BIN)/pip install -q -e '.[examples]'
	touch $@

clean:
	rm -rf $(VENV) .envtest .mypy_cache .ruff_cache .pytest_cache .hypothesis python/crdkit/*.so
