# Harmonium build. `make test` is what CI runs (.ci/run) and what the README gives.
GO        ?= go
BIN       := bin/harmonium
PY        ?= /usr/bin/python3
# BLAS backend: OpenBLAS through cgo (gonum netlib) when libopenblas is installed,
# pure-Go gonum otherwise. Override with `make BLAS=gonum` or `make BLAS=openblas`.
BLAS      ?= $(shell test -e /usr/lib/x86_64-linux-gnu/libopenblas.so -o -e /usr/lib/libopenblas.so && echo openblas || echo gonum)
TAGS      := $(if $(filter openblas,$(BLAS)),openblas,)
GOFLAGS_T := $(if $(TAGS),-tags $(TAGS),)
NOTEBOOK  ?= notebooks/quickstart.ipynb
# staticcheck at a pinned version, built through the module proxy on first use.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all deps build install test check test-short test-go test-race test-py check-generate bench generate lint demo clean fuzz fuzz-short

all: build

build:
	$(GO) build $(GOFLAGS_T) -o $(BIN) ./cmd/harmonium

install: build
	./$(BIN) install --user

# The whole test suite: lint, the Go tests with the selected BLAS backend, rbmcore
# again with pure-Go BLAS and the Go reference loops in place of the assembly (purego),
# the race detector's tier, then the Python protocol/notebook tests against the
# installed kernel.
# deps runs first in its own make so that the BLAS backend is chosen after OpenBLAS is installed.
test: deps
	$(MAKE) check

check: build check-generate lint test-go test-race fuzz-short test-py

# The Debian packages the tests need: installed when run as root, else the command to run.
deps:
	bash .ci/deps

# The quick tier (a couple of minutes): long tests skip under -short.
test-short:
	$(GO) test $(GOFLAGS_T) -short -count=1 ./...

test-go:
	$(GO) test $(GOFLAGS_T) -count=1 -timeout 15m ./...
	$(GO) test -tags purego -count=1 -timeout 15m ./rbmcore/...

# The race detector, quick tier: the kernel, the interpreter session (whose interrupts
# stop programs without yaegi's racy ExecuteWithContext), rbmcore, and the output
# recorders of `harmonium run`, which the session calls from several goroutines.
test-race:
	$(GO) test $(GOFLAGS_T) -race -short -count=1 -timeout 15m ./kernel/... ./lang ./rbmcore/...
	$(GO) test $(GOFLAGS_T) -race -short -count=1 -run 'NotebookOutput|ScriptOutput' ./cmd/harmonium

test-py: install
	HARMONIUM_BIN=$(CURDIR)/$(BIN) $(PY) -m unittest discover -s tests -p '*_test.py' -v

# Fuzz targets of the file loaders and the cell splitter (package:target). `go test`
# runs their seed corpora as ordinary tests; `make fuzz` fuzzes each one in turn
# for FUZZTIME (a duration, or Nx for N executions) with FUZZPARALLEL workers.
# A crash is saved under the package's testdata/fuzz/ and fails the target.
FUZZ_TARGETS := ./lang:FuzzSplitCell ./rbmcore/data:FuzzIDX ./rbmcore/data:FuzzIDXGzip \
	./rbmcore/data:FuzzNPY ./rbmcore/data:FuzzAlignment ./rbmcore/rbm:FuzzReadJSON \
	./rbmcore/rbm:FuzzReadBinary ./rbmcore/train:FuzzCheckpoint
FUZZTIME     ?= 10s
FUZZPARALLEL ?= 2

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($${t%%:*}) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) -parallel $(FUZZPARALLEL) $${t%%:*}; \
	done

# What `make test` runs: a few seconds per target (about a minute and a half in all,
# building included). A count, not a duration: with a duration, Go 1.26's fuzzing
# coordinator can report its own deadline as "context deadline exceeded" and fail a
# target that found nothing (golang/go#75804, fixed in Go 1.27).
fuzz-short:
	$(MAKE) fuzz FUZZTIME=5000x

bench: build
	HARMONIUM_BIN=$(CURDIR)/$(BIN) PY=$(PY) BLAS=$(BLAS) bash tests/bench.sh

generate:
	$(GO) generate ./stdlib/...

# The committed symbol tables must be what `make generate` produces from the current code.
check-generate:
	@before=$$(cat stdlib/*.go stdlib/docs.json.gz | sha256sum); \
	$(GO) generate ./stdlib/... && \
	after=$$(cat stdlib/*.go stdlib/docs.json.gz | sha256sum); \
	if [ "$$before" != "$$after" ]; then echo "stdlib/ was stale: 'make generate' changed it; commit the result"; exit 1; fi

# gofmt, vet and staticcheck, with zero findings. stdlib/ is left out of staticcheck: its
# generated symbol tables name every exported identifier of the packages they wrap,
# deprecated ones included, by design.
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet $(GOFLAGS_T) ./...
	$(GO) vet -tags purego ./rbmcore/...
	$(STATICCHECK) $(GOFLAGS_T) $$($(GO) list ./... | grep -v '/stdlib$$')

demo: build
	mkdir -p out
	./$(BIN) run $(NOTEBOOK) -o out/quickstart.ipynb

clean:
	rm -rf bin out
