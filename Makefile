# The everyday commands. `make test` is the README's test command: go test
# with the race detector, through scripts/testrun, which also names every
# reason a test was skipped (go test alone shows them only under -v); CI
# runs it through .ci/run with Postgres, RabbitMQ and Chromium.

GO        ?= go
FUZZTIME  ?= 30s
BENCHTIME ?= 1x
STATICCHECK = $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOVULNCHECK = $(GO) run golang.org/x/vuln/cmd/govulncheck@v1.1.4

.PHONY: run test bench lint vulncheck fuzz build load e2e-cluster screenshots

build:
	$(GO) build -o bin/earshot ./cmd/earshot

run:
	$(GO) run ./cmd/earshot serve

test:
	$(GO) run ./scripts/testrun -race ./...

# Two serve processes on the local Postgres and RabbitMQ, 10,000 posts
# through both (see TestCluster).
EARSHOT_TEST_POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
EARSHOT_TEST_AMQP_URL ?= amqp://guest:guest@127.0.0.1:5672/
e2e-cluster:
	EARSHOT_CLUSTER=1 EARSHOT_TEST_POSTGRES_URL='$(EARSHOT_TEST_POSTGRES_URL)' EARSHOT_TEST_AMQP_URL='$(EARSHOT_TEST_AMQP_URL)' \
		$(GO) test -count=1 -run '^TestCluster$$' -v -timeout 15m ./cmd/earshot

# Every benchmark, once each (they compare with their baseline inside one
# run and print the ratio); see README "Performance".
bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./...

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above are not formatted"; exit 1; }
	$(GO) vet ./...
	$(STATICCHECK) ./...
	@$(MAKE) --no-print-directory vulncheck

# govulncheck needs its database: vuln.go.dev, or a local copy in the same
# layout named by VULNDB (make vulncheck VULNDB=file:///path/to/vulndb).
# Where neither can be reached the check says so and passes; a finding
# always fails.
VULNDB ?=
vulncheck:
	@out=$$($(GOVULNCHECK) $(if $(VULNDB),-db $(VULNDB)) ./... 2>&1); rc=$$?; echo "$$out"; \
	if [ $$rc -ne 0 ] && echo "$$out" | grep -q 'fetching vulnerabilities'; then \
		echo "govulncheck: vulnerability database unreachable from this machine: nothing was checked"; exit 0; fi; \
	exit $$rc

# A load run against a server already running (make run in another
# shell); see README "Performance".
LOAD_URL ?= http://127.0.0.1:8080
LOAD_ARGS ?=
load:
	$(GO) run ./cmd/earshot-load -url $(LOAD_URL) $(LOAD_ARGS)

# Runs every fuzz target for FUZZTIME each. Targets are found by name, so
# a new FuzzXxx joins without an edit here.
fuzz:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' .); do \
		dir=$$(dirname $$f); \
		for name in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "== $$dir $$name"; \
			$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) ./$$dir; \
		done; \
	done

# A PNG of every dashboard page at desktop and phone width, in SHOTS
# (needs Chromium: apt-get install -y chromium).
SHOTS ?= screenshots
screenshots:
	EARSHOT_SCREENSHOTS=$(abspath $(SHOTS)) $(GO) test -count=1 -run '^TestDashboardScreenshots$$' -v ./cmd/earshot
