# dmbench: build, test, reproduce. Everything a fresh machine with Go needs
# beyond Go itself (a C compiler for the race detector) is installed here.

GO      ?= go
PKGS    := ./...
# Packages whose concurrency is real (not simulated) run under -race too.
RACE    := ./transport/... ./indexes/... ./bench/...

# reproduce: SCALE=small|default|large, FIG=<paper>/<figure> (or a paper,
# or a figure name such as fig6), JOBS=<runs at once; default one per core>,
# SEEDS=<runs per point, each under its own seed; the figures plot the mean>.
SCALE   ?= default
FIG     ?=
JOBS    ?= 0
SEEDS   ?= 1
OUT     ?= results
DMBENCH := bin/dmbench
FIG6    := dex/fig6 rftree/fig6 dolphin/fig6

.PHONY: all build test vet fmt-check unit race cc verbs-check reproduce-fig6 reproduce reproduce-all reference clean $(DMBENCH)

all: build

build: $(DMBENCH)
	$(GO) build $(PKGS)

$(DMBENCH):
	$(GO) build -o $(DMBENCH) ./cmd/dmbench

test: vet fmt-check unit race verbs-check

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

unit:
	$(GO) test -count=1 $(PKGS)

race: cc
	CGO_ENABLED=1 $(GO) test -count=1 -race $(RACE)

# The race detector needs cgo and so a C compiler.
cc:
	@command -v gcc >/dev/null 2>&1 || { \
		echo "installing gcc for the race detector"; \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq gcc; \
		else sudo apt-get update -qq && sudo apt-get install -y -qq gcc; fi; }

# The ibverbs fabric (build tag rdma) is compiled and vetted against
# libibverbs-dev, installed here when missing; no RDMA device is needed,
# as none runs here.
verbs-check: cc
	@if [ "$$(uname -s)" != Linux ]; then echo "verbs-check: libibverbs is Linux-only; skipped"; exit 0; fi; \
	test -f /usr/include/infiniband/verbs.h || { \
		echo "installing libibverbs-dev for the rdma build tag"; \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libibverbs-dev; \
		else sudo apt-get update -qq && sudo apt-get install -y -qq libibverbs-dev; fi; } && \
	CGO_ENABLED=1 $(GO) build -tags rdma ./transport/verbs/ && \
	CGO_ENABLED=1 $(GO) vet -tags rdma ./transport/verbs/

# Every experiment labelled Figure 6 in the papers: DEX, RF-tree, Dolphin.
reproduce-fig6: $(DMBENCH)
	$(DMBENCH) reproduce --scale $(SCALE) --jobs $(JOBS) --seeds $(SEEDS) --out $(OUT) $(FIG6)

reproduce: $(DMBENCH)
	@test -n "$(FIG)" || { echo "make reproduce: set FIG, e.g. FIG=dmtree/fig11 (dmbench list figures)" >&2; exit 2; }
	$(DMBENCH) reproduce --scale $(SCALE) --jobs $(JOBS) --seeds $(SEEDS) --out $(OUT) $(FIG)

# Rewrite the golden reference results (results/reference) after a change
# of the model or of an index; commit them with the claims they move.
reference:
	DMBENCH_UPDATE_REFERENCE=1 $(GO) test -count=1 -run TestReferenceResults ./experiments

reproduce-all: $(DMBENCH)
	$(DMBENCH) reproduce --scale $(SCALE) --jobs $(JOBS) --seeds $(SEEDS) --out $(OUT) all

clean:
	rm -rf bin results/tmp
