# ethlab — one Makefile for setup, tests, P4 builds, benchmarks and the demo.
# Every target that needs Python depends on `setup`, which is idempotent and installs what is missing.

SHELL      := /bin/bash
PYTHON     ?= python3
VENV       := .venv
PY         := $(VENV)/bin/python
STAMP      := $(VENV)/.ethlab-installed
APT_PKGS   := cpp nftables mininet iputils-ping iproute2 tcpdump ethtool python3-venv ruby shellcheck
P4_PROGS   := $(wildcard p4src/*.p4)
BUILD      := build/p4
TARGET     ?= p4exec
PYTEST_ARGS ?=

.PHONY: setup apt test test-fast lint p4 bench demo clean

setup: apt $(STAMP)

# apt packages: installed only when something is missing (so repeated runs are fast and offline-safe).
apt:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing apt packages:$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq $$missing >/dev/null; \
	fi

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@# compat mode puts the checkout on sys.path, so the packages win over same-named test folders
	$(PY) -m pip install -q -e '.[dev]' --config-settings editable_mode=compat
	@# Mininet is not on PyPI: link Debian's pure-Python package into the venv.
	@site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	if [ -d /usr/lib/python3/dist-packages/mininet ] && [ ! -e $$site/mininet ]; then \
	  ln -s /usr/lib/python3/dist-packages/mininet $$site/mininet; fi
	@touch $(STAMP)

# Bytecode caches on for the tests even when the environment turns them off (PYTHONDONTWRITEBYTECODE=1):
# without them every worker re-rewrites the asserts of ~270 test modules (~4 s CPU each) and every Python a
# test starts (CLI cases, partition workers) compiles the packages again (`import vfabric.run` 2.2 s -> 0.7 s).
TEST_ENV   := env -u PYTHONDONTWRITEBYTECODE

test: setup
	$(PY) -m ruff check .
	$(TEST_ENV) $(PY) -m pytest -q $(PYTEST_ARGS)

# The fast tier: unit and in-process tests (no namespaces, no BMv2, nothing marked slow, not the virtual-time
# record pins); under two minutes on a quiet 2-core machine. `make test` stays the full suite CI runs.
# `--dist loadfile`: a module goes to one worker whole, so its module-scoped fixtures (compiled
# programs) are made once, not once per worker.
FAST_MARKS := not netns and not bmv2 and not slow
test-fast: setup
	$(TEST_ENV) $(PY) -m pytest -q -n 2 --dist loadfile -m "$(FAST_MARKS)" --ignore=tests/snapshots $(PYTEST_ARGS)

lint: setup
	$(PY) -m ruff check .
	$(PY) -m mypy --ignore-missing-imports p4src linklayer controller topologies ethlab difftest p4exec vfabric traffic bench

# Compile every program in p4src/ for p4exec, and for BMv2 too when the reference compiler is installed.
# p4c takes the P4Info format from the suffix: .txt (text) is the one every p4c release knows.
p4: setup
	@mkdir -p $(BUILD)
	@for prog in $(P4_PROGS); do \
	  name=$$(basename $$prog .p4); \
	  echo "p4exec compile $$prog"; \
	  $(VENV)/bin/p4exec compile $$prog -o $(BUILD)/$$name.p4exec.json --p4runtime-files $(BUILD)/$$name.p4info.txtpb || exit 1; \
	  if command -v p4c-bm2-ss >/dev/null; then \
	    echo "p4c-bm2-ss $$prog"; \
	    p4c-bm2-ss --arch v1model --std p4-16 -o $(BUILD)/$$name.bmv2.json --p4runtime-files $(BUILD)/$$name.bmv2.p4info.txt $$prog || exit 1; \
	  fi; \
	done

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done
	@echo "== bench/switch.py --program p4src/ethplus.p4"; $(PY) bench/switch.py --program p4src/ethplus.p4

demo: setup
	$(VENV)/bin/ethlab run experiments/demo.yaml --target $(TARGET)

clean:
	rm -rf build .pytest_cache .ruff_cache
