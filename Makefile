# The commands CI and people use. `make test` is exactly what CI runs.
SHELL := /bin/bash
.DEFAULT_GOAL := help
CARGO ?= cargo
export TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres

.PHONY: help run test test-full einvoice-rules lint fmt fmt-check clippy layering deny test-all mcp-servers payment-tools pdf-tools openapi pages schemathesis mcp bench audit doc fuzz image test-image compose-check

help:
	@echo "make run     build and serve on the embedded SQLite default (http://127.0.0.1:3000)"
	@echo "make test    everything CI checks: lint, tests on every adapter, cargo deny, the OpenAPI"
	@echo "             description from outside (linters, generated clients, the reference in"
	@echo "             Chromium), schemathesis, /mcp through the MCP Python SDK"
	@echo "make test-full  make test, then the e-invoice corpus at 1,000 invoices and their credit notes"
	@echo "make lint    fmt check, clippy -D warnings, docs, layering check"
	@echo "make einvoice-rules  the e-invoice checker (official XSDs, EN 16931, XRechnung and Peppol rules) on KoSIT's and OpenPeppol's samples"
	@echo "make fmt     format the code"
	@echo "make bench   release build on PostgreSQL under load, with pgbench beside it; PDF render times"
	@echo "             and the client's page beside the PDF;"
	@echo "             the agent's webhook trigger beside a bare actix-web handler; a year's time"
	@echo "             report beside pgbench on its SQL, and billing a month of 5,000 entries;"
	@echo "             payments and Stripe's webhook at 64 connections beside pgbench's durable insert"
	@echo "             and the payment's own SQL;"
	@echo "             e-invoice XML and the Factur-X PDF beside the plain PDF; 1,000 lines over"
	@echo "             5 rates beside one rate; a 100,000-entry bank statement beside reading it alone"
	@echo "make image   the release binary in an OCI image built offline with podman (scripts/image.sh)"
	@echo "make test-image  the debug binary's image run with podman: SQLite on a volume, replicas on PostgreSQL"
	@echo "make compose-check  deploy/compose.yaml read by podman-compose"
	@echo "make fuzz    each cargo-fuzz target for FUZZ_SECONDS (default 60) on nightly"

# `make run ARGS="--agent examples/agent.yaml"` passes options on to `serve`.
run:
	$(CARGO) run --release -p app --bin billable -- serve $(ARGS)

test: lint einvoice-rules test-all deny openapi schemathesis mcp pages compose-check test-image

# `make test`, then the e-invoice corpus at 1,000 generated invoices and their credit notes
# (1,500 documents, each in every format), held to the official rules and read back by
# drafthorse and factur-x (`make test` makes 150 and their 75 credit notes).
test-full: test
	BILLABLE_CORPUS=1000 $(CARGO) test --locked -p acceptance -- --exact http::einvoice_corpus::generated_documents_pass_every_formats_rules_and_read_back_the_same

lint: fmt-check clippy doc layering

fmt:
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --locked --quiet

# The architecture's rules (scripts/layering.sh): domain crates reach no framework and no
# configuration format and word no wire; http-api's rooms import one way.
layering:
	@CARGO="$(CARGO)" bash scripts/layering.sh

# The MCP servers the agent's MCP client is tested against, from tests/mcp/package-lock.json.
mcp-servers:
	@if [ ! tests/mcp/node_modules/.package-lock.json -nt tests/mcp/package-lock.json ]; then \
	  npm ci --prefix tests/mcp --ignore-scripts --no-audit --no-fund; \
	fi

# Stripe's official library, which signs the card payment tests' webhook deliveries, from
# tests/payments/package-lock.json.
payment-tools:
	@if [ ! tests/payments/node_modules/.package-lock.json -nt tests/payments/package-lock.json ]; then \
	  npm ci --prefix tests/payments --ignore-scripts --no-audit --no-fund; \
	fi

# poppler-utils, qpdf, Chromium and the Noto fonts, which the renderer's tests compare with.
pdf-tools:
	@bash scripts/pdf-tools.sh

# Unit tests and the contract suites (each adapter runs them from its own tests), then the
# HTTP suite on each backend.
test-all: mcp-servers payment-tools pdf-tools
	$(CARGO) test --workspace --locked
	TEST_BACKEND=postgres $(CARGO) test --locked -p acceptance -- http:: agent::
	TEST_BACKEND=memory $(CARGO) test --locked -p acceptance http::

# Advisories need the RustSec database from the network; `make audit` checks them where
# there is one. Licenses, bans and sources are checked offline.
deny:
	$(CARGO) deny --locked check licenses bans sources

audit:
	$(CARGO) deny --locked check advisories

# Each cargo-fuzz target for FUZZ_SECONDS (default 60) on nightly; see docs/operations.md.
fuzz:
	./scripts/fuzz.sh

# The served /openapi.json as its users meet it: openapi-spec-validator and Spectral, a
# Python client (openapi-python-client) and a TypeScript one (openapi-typescript,
# openapi-fetch, tsc --strict) generated from it and run against a server, and the
# interactive reference driven in headless Chromium.
openapi:
	./scripts/openapi-lint.sh
	./scripts/generated-clients.sh
	./scripts/reference-check.sh

# The client's page of an invoice in headless Chromium at a desktop's and a phone's width:
# what it shows, nothing loaded from elsewhere, and axe-core's WCAG 2.1 AA rules; its
# screenshots go to target/page-screenshots/.
pages:
	./scripts/page-check.sh

schemathesis:
	./scripts/schemathesis.sh

# The e-invoice checker against KoSIT's own sample invoices: they pass, and each broken on
# purpose fails, so the pipeline the e-invoice tests rely on is shown to work.
einvoice-rules:
	python3 tests/einvoice/check.py --self-test

# /mcp through the official MCP Python SDK (tests/mcp).
mcp:
	./scripts/mcp-check.sh

# An OCI image of the release binary, built offline (scripts/image.sh).
image:
	$(CARGO) build --release -p app
	./scripts/image.sh

# The image of the debug binary run with podman as self-hosters run it (scripts/image-test.sh):
# SQLite on a volume, two replicas on PostgreSQL and Redis, SIGTERM under load.
test-image:
	$(CARGO) build --locked -p app --bin billable
	IMAGE_NAME=billable-test ./scripts/image.sh target/debug/billable
	./scripts/image-test.sh billable-test:latest target/debug/billable

# deploy/compose.yaml as podman-compose reads it (deploy/requirements.txt pins it); its
# PostgreSQL and Redis images cannot be pulled here, so nothing is started.
compose-check:
	CONTAINERS_CONF=$(CURDIR)/deploy/containers.conf podman-compose -f deploy/compose.yaml config >/dev/null

bench:
	./scripts/bench.sh
	./scripts/bench-pdf.sh
	./scripts/bench-agent.sh
	./scripts/bench-github.sh
	./scripts/bench-time.sh
	./scripts/bench-payments.sh
	./scripts/bench-sending.sh
	./scripts/bench-einvoice.sh
	./scripts/bench-banking.sh
