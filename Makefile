# dmbench: build, test, reproduce. Everything a fresh machine with Go needs
# beyond Go itself (a C compiler for the race detector) is installed here.

GO      ?= go
PKGS    := ./...
# Packages whose concurrency is real (not simulated) run under -race too.
RACE    := ./transport/...

.PHONY: all build test vet fmt-check unit race cc reproduce-fig6 clean

all: build

build:
	$(GO) build $(PKGS)

test: vet fmt-check unit race

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

# The figure catalog (experiments/, plots/) is not built yet: say so
# instead of pretending.
reproduce-fig6:
	@echo "make reproduce-fig6: the figure catalog is not built yet (see README, 'State')." >&2; exit 2

clean:
	rm -rf results/tmp
