# Two set-up commands for a fresh machine: `make demo` and `make test` (README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two installs into one venv: the base (`pip install -e .`, what the demo, the UI and backfills
# need) and the full one (`.[dev]`: every extra plus the test tools) for tests, lint and benchmarks.
BASE_STAMP := $(VENV)/.installed-base
STAMP := $(VENV)/.installed

# CORPUS_SOURCE=bulk: PDFs and e-prints come from a bulk root in arXiv's layout (CORPUS_BULK); the
# demo then keeps its own landing zone (oai/ and tei/ only) and data root beside the landing demo's.
BULK_DEMO := $(filter bulk,$(CORPUS_SOURCE))
export CORPUS_HOME ?= $(CURDIR)/$(if $(BULK_DEMO),data-bulk,data)
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export GROBID_URL ?= http://localhost:8070
# The demo's landing zone: CORPUS_LANDING when set, else one generated into ./landing.
DEMO_LANDING := $(if $(CORPUS_LANDING),$(CORPUS_LANDING),$(CURDIR)/$(if $(BULK_DEMO),landing-bulk,landing))
DEMO_RECORDS ?= 300
DEMO_DAYS ?= 5

.PHONY: demo test lint ui venv venv-base dagster-home sample bench clean backfill rederive test-containers test-chaos test-upgrade

define install
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '$(1)'
endef

venv: $(STAMP)
$(STAMP): pyproject.toml setup.py corpus/_tally.c corpus/_prefix.c
	$(call install,.[dev])
	@touch $(BASE_STAMP) $(STAMP)   # the full install holds the base one

venv-base: $(BASE_STAMP)
$(BASE_STAMP): pyproject.toml setup.py corpus/_tally.c corpus/_prefix.c
	$(call install,.)
	@touch $(BASE_STAMP)

# The instance config, with as many concurrent runs as the machine has cores.
NPROC := $(shell nproc 2>/dev/null || echo 2)
dagster-home:
	@mkdir -p $(DAGSTER_HOME)
	@sed 's/^\(    max_concurrent_runs:\) [0-9]*/\1 $(NPROC)/' dagster.yaml > $(DAGSTER_HOME)/.dagster.yaml.new
	@cmp -s $(DAGSTER_HOME)/.dagster.yaml.new $(DAGSTER_HOME)/dagster.yaml \
	  && rm $(DAGSTER_HOME)/.dagster.yaml.new || mv $(DAGSTER_HOME)/.dagster.yaml.new $(DAGSTER_HOME)/dagster.yaml

# A small synthetic landing zone made by the project's own generator (only when CORPUS_LANDING is unset).
# With CORPUS_SOURCE=bulk and a local CORPUS_BULK without manifests, the same papers are written as a
# bulk root there (tars + manifests) and the landing zone keeps only oai/ and tei/.
sample: venv-base
	@if [ -n "$(BULK_DEMO)" ] && [ -z "$(CORPUS_BULK)" ]; then \
	  echo "CORPUS_SOURCE=bulk needs CORPUS_BULK (a directory, s3:// or gs:// URL)" >&2; exit 2; \
	fi
	@if [ -z "$(CORPUS_LANDING)" ] && [ ! -f "$(DEMO_LANDING)/sample_manifest.jsonl" ]; then \
	  bulk=""; \
	  if [ -n "$(BULK_DEMO)" ] && [[ "$(CORPUS_BULK)" != *://* ]] && [ ! -e "$(CORPUS_BULK)/pdf/arXiv_pdf_manifest.xml" ]; then \
	    bulk="--bulk $(CORPUS_BULK)"; echo "and a bulk root in arXiv's layout in $(CORPUS_BULK)"; fi; \
	  echo "generating a synthetic landing zone (metadata, PDFs, TEI, LaTeX) in $(DEMO_LANDING)"; \
	  $(BIN)/python -m corpus.sample --out "$(DEMO_LANDING)" --records $(DEMO_RECORDS) --days $(DEMO_DAYS) \
	    --seed 7 --full-text $$bulk; \
	fi

demo: venv-base dagster-home sample
	$(BIN)/python -W ignore -m corpus_assets.demo --landing "$(DEMO_LANDING)"

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q tests/test_layers.py  # corpus never imports dagster; ingest < parse < papers < graph < release

# Test files side by side, one worker per core (at most 8: each may run Dagster runs of its own);
# a file's tests stay on one worker, so its module fixtures are built once.
TEST_WORKERS ?= $(shell n=$(NPROC); echo $$(( n < 8 ? n : 8 )))
test: venv dagster-home
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# The compose deployment run for real (docker/README.md): Docker, Compose and mmdebstrap from apt
# where missing, dockerd started if none answers, images built from Debian packages (cached), the
# stack's checks (docker/test_stack.py), an upgrade in place (test_upgrade.py) and the stack's
# faults (test_chaos.py, the subset: the six in-process service kills, a Celery worker's and
# Redis's, one more picked by the printed seed, cut at 15 minutes), each file on its own stack,
# then the host put back as found. Skips, saying so, where Docker cannot run.
test-containers: venv
	CORPUS_CHAOS_SUBSET=$${CORPUS_CHAOS_SUBSET:-1} CORPUS_CHAOS_BUDGET_S=$${CORPUS_CHAOS_BUDGET_S:-900} \
	  bash docker/test-containers.sh docker/test_stack.py docker/test_upgrade.py docker/test_chaos.py

# Every fault (docker/test_chaos.py, ~30 minutes on 2 cores: kill -9 of each service, Grobid busy
# and hanging, a full data volume, the stack stopped and restarted, with each executor;
# CORPUS_CHAOS_SEED repeats a run, CORPUS_CHAOS_FAULTS=a,b picks some, CORPUS_CHAOS_SUBSET=1 the
# CI's subset), or only the upgrade in place (docker/test_upgrade.py, ~6 minutes alone); same
# set-up and clean-up as test-containers.
test-chaos: venv
	bash docker/test-containers.sh docker/test_chaos.py

test-upgrade: venv
	bash docker/test-containers.sh docker/test_upgrade.py

# The Dagster UI on 127.0.0.1:$(UI_PORT) (3000), first partition moved back to the landing zone's
# earliest day. Dagster starts in $(DAGSTER_HOME), beside the dagster.yaml it uses (in the repository
# it warned that ./dagster.yaml, the template, is not the instance's); the job pages' automation tag
# is set to what runs, and SIGTERM / SIGINT stop it and every process it started even when it was
# started where SIGINT is ignored (corpus_assets/ui.py).
UI_PORT ?= 3000
ui: venv-base dagster-home
	@start=$$($(BIN)/python -m corpus.ingest.landing earliest "$(DEMO_LANDING)"); \
	if [ -n "$$start" ] && [[ "$$start" < "$${CORPUS_START_DATE:-2007-04-01}" ]]; then export CORPUS_START_DATE=$$start; fi; \
	cd "$(DAGSTER_HOME)" && DAGSTER_HOME="$$(pwd -P)" CORPUS_LANDING="$(DEMO_LANDING)" \
	exec $(CURDIR)/$(BIN)/python -m corpus_assets.ui -h 127.0.0.1 -p $(UI_PORT) -w $(CURDIR)/workspace.yaml

# Every daily asset over FROM..TO as one Dagster backfill: runs of CORPUS_DAYS_PER_RUN days side by
# side on every core; waits; exits non-zero if a day failed.
backfill: venv-base dagster-home
	@if [ -z "$(FROM)" ] || [ -z "$(TO)" ]; then echo "usage: make backfill FROM=YYYY-MM-DD TO=YYYY-MM-DD"; exit 2; fi
	CORPUS_LANDING="$(DEMO_LANDING)" $(BIN)/python -W ignore -m corpus_assets.backfill --from $(FROM) --to $(TO)

# What a code change alters, re-derived (corpus_assets/rederive.py): the (asset, day) pairs built by
# an older stage version, then, round by round, the days whose inputs' content changed; waits; exits
# non-zero if a day failed. FROM/TO limit the days; DRY=1 prints the first round and runs nothing.
rederive: venv-base dagster-home
	CORPUS_LANDING="$(DEMO_LANDING)" $(BIN)/python -W ignore -m corpus_assets.rederive \
	  $(if $(FROM),--from $(FROM)) $(if $(TO),--to $(TO)) $(if $(DRY),--dry-run)

bench: venv
	@for b in benchmarks/[a-z]*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf data .dagster_home/storage .dagster_home/history .dagster_home/schedules
