# Two commands on a fresh machine: `make run` (serve the app and a worker on SQLite) and `make test` (every test,
# against PostgreSQL, Redis and a real Celery worker, plus headless Chromium journeys).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# `make test` installs PostgreSQL, Redis and Chromium from Debian's packages where missing and starts a
# private PostgreSQL and Redis on loopback for the run (tools/test_services.sh; ports 55432 and 56379,
# ATLAS_TEST_PG_PORT / ATLAS_TEST_REDIS_PORT), stopping them when the run ends.
SERVICES := tools/test_services.sh

.PHONY: install plane-binaries run worker test test-fast browser cluster cluster-stop bench mutation mutation-services mutation-sample clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]'
	touch $@

install: $(VENV)/.installed

run: install
	$(PY) manage.py serve_embedded --prepare $(HOST):$(PORT)

# The local control plane (docs/controlplane.md): etcd, kube-apiserver, controller-manager, scheduler, KWOK and
# Kueue built from controlplane/ (cached) and started on loopback from ATLAS_CONTROLPLANE_PORT_BASE (47100);
# Ctrl-C or `make cluster-stop` stops every process it started. CLUSTER_ARGS="--with volcano --with coscheduling" adds those.
cluster: install
	$(PY) -m placement.deploy.localplane up $(CLUSTER_ARGS)

cluster-stop: install
	$(PY) -m placement.deploy.localplane stop

# Real mode worker: CELERY_BROKER_URL=redis://127.0.0.1:6379/0 DATABASE_URL=... make worker
worker: install
	$(VENV)/bin/celery -A config worker --loglevel=info --concurrency=1

# Debian's chromium for the browser journeys (Playwright cannot download its own browser here),
# PostgreSQL and Redis for the tests.
browser:
	$(SERVICES) install

# The control-plane tests need etcd, Kubernetes, KWOK, Kueue, helm, Volcano and coscheduling built from controlplane/ (cached under
# ~/.cache/atlas-controlplane; cold: ~15 min for the first five and ~14 more for the last two on 2 cores,
# docs/controlplane.md); built before the
# tests start so a build failure stops the run at once with the component's own message.
# ATLAS_CONTROLPLANE_TESTS=0 skips both the build and the whole-plane tests.
PLANE_MODULES := etcd kubernetes kwok kueue helm volcano coscheduling

plane-binaries:
	@if [ "$${ATLAS_CONTROLPLANE_TESTS:-1}" != 0 ]; then \
	  start=$$(date +%s); controlplane/build.sh $(PLANE_MODULES) >/dev/null && \
	  echo "control-plane binaries ready in $$(( $$(date +%s) - start )) s ($(PLANE_MODULES))"; fi

test: install plane-binaries
	$(VENV)/bin/lint-imports
	$(SERVICES) run -- $(PY) -m pytest $(PYTEST_ARGS)

test-fast: install
	$(VENV)/bin/lint-imports
	$(SERVICES) run -- $(PY) -m pytest -m "not worker and not browser" $(PYTEST_ARGS)

bench: install
	@command -v wrk >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; }
	$(PY) benchmarks/rules_bench.py
	$(PY) benchmarks/sim_bench.py all
	$(PY) benchmarks/api_bench.py
	$(SERVICES) run -- $(PY) benchmarks/page_bench.py

# Mutation testing of the core pure modules ([tool.mutmut] in pyproject.toml); slow, not in CI
# (docs/testing.md). One module only: make mutation MUTATE=scheduler_core.mig
MUTATE ?=
mutation: install
	rm -rf mutants
	nice -n 10 $(VENV)/bin/mutmut run --max-children 2 $(if $(MUTATE),'$(MUTATE).*') || true
	$(PY) tools/mutation_report.py

# The Django services (tools/mutation_services.py): their tests on PostgreSQL, database
# MUTATION_DATABASE_URL (tests use test_<name>, --reuse-db), one mutmut child. One module:
# make mutation-services MUTATE=placement.review.services
MUTATION_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/mut
mutation-services: install
	rm -rf mutants
	MUTATION_DATABASE_URL=$(MUTATION_DATABASE_URL) nice -n 10 $(PY) tools/mutation_services.py run $(if $(MUTATE),'$(MUTATE).*') || true
	$(PY) tools/mutation_report.py --services

# A seeded random sample of SAMPLE mutants per module (tools/mutation_sample.py), for modules too large
# to run whole here: make mutation-sample SAMPLE_OF=scheduler_core.policies SAMPLE=60 SEED=19
# (SERVICES=1: the Django services' configuration). Prints each module's score with its 95% interval.
SAMPLE ?= 60
SEED ?= 19
SAMPLE_OF ?= scheduler_core.policies
mutation-sample: install
	$(if $(SERVICES),MUTATION_DATABASE_URL=$(MUTATION_DATABASE_URL)) nice -n 10 $(PY) tools/mutation_sample.py --run \
		$(if $(SERVICES),--services) --per-module $(SAMPLE) --seed $(SEED) $(SAMPLE_OF)

clean:
	rm -rf $(VENV) var .pytest_cache mutants
