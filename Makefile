# Foresight: `make demo` and `make test` are the two commands; both run `make setup` first.
SHELL := /bin/bash
# Without it, cmake's own make prints every directory it enters and leaves.
MAKEFLAGS += --no-print-directory
VENV  := $(CURDIR)/.venv
PY    := $(VENV)/bin/python
BUILD := $(CURDIR)/build
CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(VENV)

.PHONY: setup deps venv bytecode runtime demo test test-c test-py lint bench clean

setup: deps venv bytecode runtime

deps:
	@scripts/install-deps.sh

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $@

# Python's bytecode of the package, made once here: where PYTHONDONTWRITEBYTECODE is
# set, every `foresight cc` would otherwise compile its modules again (0.07 s a file).
bytecode: venv
	@$(PY) -m compileall -q src/foresight

# The runtime and benchmark programs, installed into the venv prefix.
runtime: venv
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j2
	@cmake --install $(BUILD) >/dev/null

# Unmodified programs (benchmarks/demo) through foresight cc, out of core and in core.
demo: setup
	$(VENV)/bin/foresight bench demo --mem 128M --ratio 3 --readahead-kb 128 --repeat 2

# C unit tests under ASan+UBSan and TSan, then the Python suite against the installed runtime.
test: setup test-c test-py

test-c:
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Debug -DFORESIGHT_SANITIZE=address,undefined >/dev/null
	@cmake --build $(BUILD)-asan -j2
	cd $(BUILD)-asan && ctest --output-on-failure -j2
	@cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=Debug -DFORESIGHT_SANITIZE=thread >/dev/null
	@cmake --build $(BUILD)-tsan -j2
	cd $(BUILD)-tsan && ctest --output-on-failure -j2 -L threads

test-py:
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/pytest -q

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan
