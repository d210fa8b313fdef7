# memstor — reproducible memory and storage performance profiling.
# `make help` lists the targets. Every step is a file target: a second `make all` does nothing, and a
# changed profile section reruns only the notebook that reads it.

SHELL        := /bin/bash
.SHELLFLAGS  := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
.SECONDARY:

PROFILE ?= standard#   quick | standard | full | pts (params/<profile>.yaml)
TARGET  ?=#            directory for the fio test file (default data/scratch)
DATA    ?= data#       data root: raw/ and processed/
DEVICE  ?=#            raw block device for the fio experiments (overwrites it!): needs CONFIRM_DEVICE too
CONFIRM_DEVICE ?=#     the same device named a second time
HOST    ?=#            device name (data folder); default: the host name, <host>-<label> for another filesystem or a raw device
HOSTS   ?=#            host file: measure its hosts over SSH (fio-block-size, -rw-ratio, -queue-depth on all at once)
PYTHON  ?= python3#    interpreter used to create .venv
PORT    ?= 8888#       make lab: port on 127.0.0.1

# tcsh exports HOST=<hostname> to every program: that is the shell's, not a choice of device name.
ifeq ($(origin HOST),environment)
ifeq ($(HOST),$(shell hostname 2>/dev/null))
HOST :=
endif
endif

PROFILES  := $(sort $(patsubst params/%.yaml,%,$(wildcard params/*.yaml)))
ifeq ($(filter $(PROFILE),$(PROFILES)),)
$(error PROFILE=$(PROFILE) is not a profile: choose one of $(PROFILES) (files params/<profile>.yaml))
endif

VENV      := .venv
PY        := $(VENV)/bin/python
MEMSTOR   := $(VENV)/bin/memstor
BUILD     := build
SYSDEPS   := $(BUILD)/.sysdeps
TESTDEPS  := $(BUILD)/.sysdeps-test
ENV_STAMP := $(VENV)/.memstor-installed
LOADLAT   := $(BUILD)/bin/loadlat
LOADLAT_ARM64 ?= $(BUILD)/arm64/loadlat#  make loadlat-arm64 (a test builds into its own folder)
IOARRIVE  := $(BUILD)/bin/ioarrive
IOARRIVE_ARM64 ?= $(BUILD)/arm64/ioarrive#  make ioarrive-arm64 (a test builds into its own folder)
ARM64_CC  ?= aarch64-linux-gnu-gcc
DATA_ABS  := $(abspath $(DATA))
# memstor run's target options: --hosts FILE for a fleet, else --target/--host
RUN_WHERE = $(if $(HOSTS),--hosts $(abspath $(HOSTS)),$(if $(TARGET),--target $(TARGET)) $(if $(HOST),--host $(HOST)))
# storage sections only (fio-*, mixed-load-map: S11-loop 2, the map ran on the scratch file beside a raw device): a
# raw device (named twice) instead of the test file
DEVICE_SET = $(if $(filter fio-% mixed-load-map,$(1)),$(if $(DEVICE)$(CONFIRM_DEVICE),--set device=$(DEVICE) --set confirm_device=$(CONFIRM_DEVICE)))
LIB_SRC   := $(shell find lib/memstor -name '*.py' 2>/dev/null)
# Experiment notebooks NN-<experiment>.ipynb (10-89), one per family registered in lib/memstor/experiments/.
# A profile leaves a family out with a one-line section `<experiment>: {skip: "why"}` (e.g. the SNIA PTS tests in
# the standard profile: make all keeps its time); memstor run names the reason.
SKIPPED   := $(shell sed -n 's/^\([a-z0-9-]*\): *{ *skip:.*/\1/p' params/$(PROFILE).yaml 2>/dev/null)
EXPERIMENT_NBS := $(filter-out $(addprefix %-,$(SKIPPED)),$(sort $(basename $(notdir $(wildcard notebooks/[1-8][0-9]-*.ipynb)))))
EXECUTED  := $(EXPERIMENT_NBS:%=$(BUILD)/notebooks/%.ipynb)
EXP       = $(shell echo $(1) | sed 's/^[0-9]*-//')#  notebook name -> experiment name
PAPERMILL := $(VENV)/bin/papermill --engine memstor --kernel memstor --cwd notebooks --no-progress-bar
CC        ?= cc

.PHONY: help all env sysdeps loadlat loadlat-arm64 ioarrive ioarrive-arm64 fio-matrix test test-fast lint lab report bench bench-check soak lock clean distclean FORCE

help: ## list the targets
	@echo "memstor — make <target> [PROFILE=quick|standard|full] [TARGET=/dir/on/drive/under/test] [DATA=data] [HOST=name] [HOSTS=hosts.yaml]"
	@grep -E '^[a-z][a-zA-Z0-9_-]*:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | awk -F'\t' '{printf "  %-14s %s\n", $$1, $$2}'
	@echo "Profiles: quick (first look), standard (default), full (60 s per point, 3 repetitions: hours)."
	@echo "Measured on a 2-vCPU VM: make test-fast 47 s, make test 33 min (fio matrix included), make all PROFILE=quick 10 min, make all about 45 min."

all: report/report.html ## measure everything for PROFILE, then build report/report.html and report.pdf

# --- environment -------------------------------------------------------------------------------
sysdeps: $(SYSDEPS) ## install system packages (fio, cc, make, xelatex, pandoc, poppler, nvme-cli, smartmontools)
$(SYSDEPS): scripts/install-system-deps
	scripts/install-system-deps
	@mkdir -p $(@D) && touch $@

env: $(ENV_STAMP) ## create .venv from requirements.txt, install memstor, register the Jupyter kernel
$(ENV_STAMP): requirements.txt pyproject.toml | $(SYSDEPS)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || { echo "make: cannot create $(VENV) with $(PYTHON): install python3-venv (apt-get install python3-venv) or set PYTHON=..." >&2; exit 1; }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -e .
	$(PY) -m ipykernel install --sys-prefix --name memstor --display-name "Python (memstor)" >/dev/null
	@touch $@

lock: ## recompile requirements.txt from requirements.in
	$(VENV)/bin/pip-compile --quiet --strip-extras --no-header --no-emit-find-links -o requirements.txt requirements.in
	@sed -i '1i # Pinned lock of requirements.in (Python 3.11, Linux x86-64). Regenerate: make lock' requirements.txt

loadlat: $(LOADLAT) ## build the MLC-compatible loaded-latency tool (build/bin/loadlat)
$(LOADLAT): $(wildcard lib/loadlat/*.c lib/loadlat/*.h) | $(SYSDEPS)
	@command -v $(CC) >/dev/null || { echo "make: no C compiler '$(CC)': apt-get install build-essential (or dnf install gcc make), or set CC=..." >&2; exit 1; }
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -pthread -o $@ lib/loadlat/*.c -lm

# aarch64 cross build, linked statically so that qemu-aarch64 runs it without an arm64 sysroot
# (tests/test_loadlat_arm64.py runs its functional tests that way; scripts/install-system-deps --arm64).
loadlat-arm64: $(LOADLAT_ARM64) ## cross-build loadlat for aarch64 Linux (build/arm64/loadlat, static)
$(LOADLAT_ARM64): $(wildcard lib/loadlat/*.c lib/loadlat/*.h)
	@command -v $(firstword $(ARM64_CC)) >/dev/null || { echo "make: no aarch64 cross compiler '$(ARM64_CC)': scripts/install-system-deps --arm64 (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user), or set ARM64_CC=..." >&2; exit 1; }
	@mkdir -p $(@D)
	$(ARM64_CC) -O2 -g -Wall -Wextra -pthread -static -o $@ lib/loadlat/*.c -lm

# The arrival-driven (open-loop) I/O generator: io_uring and libaio through raw system calls (no library).
ioarrive: $(IOARRIVE) ## build the open-loop I/O generator (build/bin/ioarrive)
$(IOARRIVE): $(wildcard lib/ioarrive/*.c lib/ioarrive/*.h) | $(SYSDEPS)
	@command -v $(CC) >/dev/null || { echo "make: no C compiler '$(CC)': apt-get install build-essential (or dnf install gcc make), or set CC=..." >&2; exit 1; }
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -pthread -o $@ lib/ioarrive/*.c -lm
ioarrive-arm64: $(IOARRIVE_ARM64) ## cross-build ioarrive for aarch64 Linux (build/arm64/ioarrive, static)
$(IOARRIVE_ARM64): $(wildcard lib/ioarrive/*.c lib/ioarrive/*.h)
	@command -v $(firstword $(ARM64_CC)) >/dev/null || { echo "make: no aarch64 cross compiler '$(ARM64_CC)': scripts/install-system-deps --arm64 (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user), or set ARM64_CC=..." >&2; exit 1; }
	@mkdir -p $(@D)
	$(ARM64_CC) -O2 -g -Wall -Wextra -pthread -static -o $@ lib/ioarrive/*.c -lm

# --- experiments -------------------------------------------------------------------------------
# The profile section of each experiment, rewritten only when its content changes.
$(BUILD)/params/%.yaml: params/$(PROFILE).yaml $(ENV_STAMP) FORCE
	@mkdir -p $(@D)
	@$(MEMSTOR) params $(call EXP,$*) --profile $(PROFILE) $(call DEVICE_SET,$(call EXP,$*)) \
	  --add target_dir="$(TARGET)" --add host="$(HOST)" -o $@

# Measure from the CLI (a console progress bar with ETA), then execute the notebook (points cached).
$(BUILD)/notebooks/%.ipynb: notebooks/%.ipynb $(BUILD)/params/%.yaml $(ENV_STAMP) $(LIB_SRC)
	@mkdir -p $(@D)
	@echo "== $* (profile $(PROFILE)) =="
	@rm -f $@.not-run
	rc=0; $(MEMSTOR) run $(call EXP,$*) --profile $(PROFILE) --data $(DATA_ABS) $(RUN_WHERE) \
	  $(call DEVICE_SET,$(call EXP,$*)) --skip-note $@.not-run || rc=$$?; \
	if [ $$rc -eq 3 ]; then $(PY) -m memstor.report.not_run $< $@ $@.not-run; exit 0; fi; \
	test $$rc -le 1; \
	$(PAPERMILL) $< $@ -f $(BUILD)/params/$*.yaml -p data_dir $(DATA_ABS) -p target_dir "$(TARGET)" -p figures_dir $(abspath report/figures) \
	  $(if $(HOST),-p host $(HOST)) $(if $(HOSTS),-p hosts $(abspath $(HOSTS)))

$(foreach nb,$(EXECUTED),$(if $(findstring -mlc-,$(nb))$(findstring -mem-,$(nb)),$(nb))): $(LOADLAT)
$(foreach nb,$(EXECUTED),$(if $(findstring -load-latency,$(nb)),$(nb))): $(IOARRIVE)

# Offline HTML (images inlined, no CDN scripts) of each executed experiment notebook.
report/%.html: $(BUILD)/notebooks/%.ipynb
	@mkdir -p $(@D)
	$(MEMSTOR) report $< report --name $* --html-only

$(BUILD)/notebooks/90-synthesis.ipynb: notebooks/90-synthesis.ipynb $(EXECUTED) $(wildcard data/specs/*.yaml) $(ENV_STAMP) $(LIB_SRC)
	@mkdir -p $(@D)
	$(PAPERMILL) $< $@ -p data_dir $(DATA_ABS) -p specs_dir $(abspath data/specs) -p profile $(PROFILE) \
	  -p tables_dir $(abspath report/tables)

report/report.html: $(BUILD)/notebooks/90-synthesis.ipynb $(EXPERIMENT_NBS:%=report/%.html)
	$(MEMSTOR) report $< report

report: $(ENV_STAMP) ## rebuild the report from the data already in DATA (measures nothing)
	@mkdir -p $(BUILD)/notebooks
	$(PAPERMILL) notebooks/90-synthesis.ipynb $(BUILD)/notebooks/90-synthesis.ipynb -p data_dir $(DATA_ABS) \
	  -p specs_dir $(abspath data/specs) -p profile $(PROFILE) -p tables_dir $(abspath report/tables)
	@for nb in $(EXECUTED); do [ ! -f $$nb ] || $(MEMSTOR) report $$nb report --name $$(basename $$nb .ipynb) --html-only; done
	$(MEMSTOR) report $(BUILD)/notebooks/90-synthesis.ipynb report

# --- interactive, tests, benchmarks -------------------------------------------------------------
lab: $(ENV_STAMP) $(LOADLAT) ## JupyterLab on notebooks/ (memstor kernel), 127.0.0.1 only, with a token [PORT=8888]
	@PORT=$(PORT) JUPYTER=$(abspath $(VENV))/bin/jupyter scripts/lab

# The suite's own system packages: Chromium + chromedriver (the JupyterLab browser test), the aarch64 cross
# compiler + qemu-user (loadlat's arm64 tests), ssh/sshd/iproute2 (the fleet tests in network namespaces).
$(TESTDEPS): scripts/install-system-deps
	scripts/install-system-deps --browser --arm64 --fleet
	@mkdir -p $(@D) && touch $@

# make test runs every test but the soak tests (-m "not soak") in two halves: make test-fast's tier in parallel
# (pytest-xdist, -n auto: 2 workers on a 2-vCPU VM; its guard fails a test there that starts fio, loadlat, cc, a
# notebook, a browser, ssh or qemu), then all the others one at a time (they measure: nothing may run beside them).
# FAST_TIER_MARKS is test-fast's -m expression, read from its recipe so that the two cannot drift; the second half
# is "not soak and not (FAST_TIER_MARKS)", so together they select exactly "not soak" whatever the expression
# names, and no test twice. Both halves run even when the first fails; the fio matrix only when both passed.
FAST_TIER_MARKS = $(shell sed -n '/^test-fast:/{n;s/^\tMEMSTOR_FAST_TIER=1 .* -m "\([^"]*\)" .*/\1/p;}' $(firstword $(MAKEFILE_LIST)))
test: $(ENV_STAMP) $(LOADLAT) $(IOARRIVE) $(TESTDEPS) ## the whole suite: installs what it needs (browser, arm64 cross tools, sshd), then the fast tier in parallel, real fio, loadlat, papermill, nbconvert, ssh, qemu one at a time; then the fio matrix
	@case '$(FAST_TIER_MARKS)' in 'not (soak or '*) ;; *) echo "make test: test-fast's recipe has no -m \"not (soak or ...)\" expression: '$(FAST_TIER_MARKS)'" >&2; exit 2;; esac
	rc=0; \
	MEMSTOR_FAST_TIER=1 $(VENV)/bin/pytest -q -m "$(FAST_TIER_MARKS)" -p no:cacheprovider -n auto --durations=10 || rc=$$?; \
	$(VENV)/bin/pytest -q -m "not soak and not ($(FAST_TIER_MARKS))" -p no:cacheprovider --durations=25 || rc=$$?; \
	exit $$rc
	@$(MAKE) --no-print-directory fio-matrix

# --- the fio version matrix ------------------------------------------------------------------------
# fio's release sources (third_party/fio/, SOURCES.md) built once each into build/fio/<X.Y>/fio (static where
# the machine links statically; scripts/build-fio), and the compatibility tier (pytest -m fio_compat: output
# formats, logs and iologs, a few short points of every storage family, the open-loop path) run against
# each of them. The system fio runs the same tier inside make test.
FIO_VERSIONS := $(patsubst third_party/fio/fio-%.tar.xz,%,$(wildcard third_party/fio/fio-*.tar.xz))
FIO_DEPS     := $(BUILD)/.sysdeps-fio
FIO_COMPAT_TESTS = $(shell grep -l 'mark.fio_compat' tests/test_*.py)#  collect only these (the whole tree takes ~10 s)
$(FIO_DEPS): scripts/install-system-deps
	scripts/install-system-deps --fio-matrix
	@mkdir -p $(@D) && touch $@
$(BUILD)/fio/%/fio: third_party/fio/fio-%.tar.xz scripts/build-fio | $(FIO_DEPS)
	scripts/build-fio $*
# The releases build at once (one build keeps a CPU busy about half the time: tar, configure; here 3 builds took
# 65 s one after another, 44 s at once); their compatibility tiers run one version at a time (they measure).
FIO_BINARIES = $(FIO_VERSIONS:%=$(BUILD)/fio/%/fio)
fio-matrix: $(ENV_STAMP) $(IOARRIVE) ## build fio's releases (third_party/fio) and run the fio compatibility tier against each
	$(if $(FIO_BINARIES),@$(MAKE) --no-print-directory -q $(FIO_BINARIES) || $(MAKE) --no-print-directory -j$(words $(FIO_BINARIES)) $(FIO_BINARIES))
	@failed=; for v in $(FIO_VERSIONS); do \
	  echo "== fio compatibility tier: fio-$$v ($(BUILD)/fio/$$v/fio) =="; \
	  MEMSTOR_FIO=$(abspath $(BUILD)/fio/$$v/fio) $(VENV)/bin/pytest -q -m fio_compat -p no:cacheprovider $(FIO_COMPAT_TESTS) || failed="$$failed $$v"; \
	done; \
	if [ -n "$$failed" ]; then echo "make fio-matrix: the compatibility tier failed with fio$$failed" >&2; exit 1; fi

test-fast: $(ENV_STAMP) ## the tests that start no fio, loadlat/cc, notebook, browser, ssh or qemu (under 3 min; make test before a commit)
	MEMSTOR_FAST_TIER=1 $(VENV)/bin/pytest -q -m "not (soak or fio or loadlat or notebook or browser or fleet or qemu)" -p no:cacheprovider -n auto --durations=10

lint: $(ENV_STAMP) ## ruff, the import contracts (import-linter, pyproject.toml), mypy over lib/memstor and the structure limits (scripts/check-structure)
	$(VENV)/bin/ruff check lib bench tests scripts/check-structure
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy
	$(PY) scripts/check-structure

soak: $(ENV_STAMP) $(LOADLAT) ## long reliability tests (interruptions, faults, fuzzing)
	$(VENV)/bin/pytest -q -m soak -p no:cacheprovider

$(BUILD)/bin/chase: bench/chase.c
	@mkdir -p $(@D)
	$(CC) -O2 -o $@ $<

bench: $(ENV_STAMP) $(LOADLAT) $(BUILD)/bin/chase ## benchmarks -> report/bench.md and report/bench.csv (ratios, medians of >=3)
	@command -v likwid-bench >/dev/null 2>&1 || scripts/install-system-deps --bench || echo "make bench: likwid-bench unavailable; the bandwidth figures will say 'not measured'" >&2
	$(PY) bench/harness.py --out report

# CI's guard (.ci/run): the quick figures against their committed baselines (bench/baseline.json); a figure worse
# than its baseline by more than its tolerance fails, named with the commit that set it. A new baseline is a
# deliberate commit: $(PY) bench/check.py --write-baseline --reason "why" (README, Benchmarks).
bench-check: $(ENV_STAMP) ## CI's benchmark guard: CLI start-up, parse, no-op make all vs bench/baseline.json (under 1 min)
	$(PY) bench/check.py --out $(BUILD)/bench-check

clean: ## remove build/ and generated report files (never data/raw)
	rm -rf $(BUILD)/notebooks $(BUILD)/params report/*.html report/*.pdf report/figures
distclean: clean ## also remove .venv and build/ (raw data is kept)
	rm -rf $(VENV) $(BUILD)

FORCE:
