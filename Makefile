# Locus build, test and benchmark entry points. CI calls `make test` (see .ci/run).
GO        ?= go
BIN       := bin
TOOLS     := $(CURDIR)/.cache/bin
STATICCHECK_VERSION := v0.8.2
export CGO_ENABLED ?= 0

.PHONY: build locus locus-scheduler run test k8s-tools lint unit fuzz bench-vet numa-test e2e bench crash tools clean

build: locus locus-scheduler

locus:
	$(GO) build -o $(BIN)/locus ./cmd/locus

# kube-scheduler with Locus's plugin; the only binary built from k8s.io/kubernetes.
locus-scheduler:
	$(GO) build -o $(BIN)/locus-scheduler ./cmd/locus-scheduler

# The main job with its embedded default: the standalone agent managing two
# demo workloads (LS bound to its own CPU, BE in the BE pool) until Ctrl-C.
run: locus
	$(BIN)/locus agent --standalone

# Every test: static checks, unit and real-kernel tests (the Kubernetes ones
# against a real kube-apiserver and etcd), the benchmark module's own tests
# (built against k8s.io/kubernetes, kept out of the main module), the NUMA
# tests in a multi-node QEMU guest, and the end-to-end tests on a real node.
# The fuzz targets' seeds run in unit (go test runs them as tests); the
# fuzzing itself is `make fuzz`: its short run failed now and then with the
# fuzz engine's "context deadline exceeded" on FuzzParseNamespaceConfig.
test: k8s-tools lint unit bench-vet numa-test e2e

# Every fuzz target for FUZZTIME each (hack/fuzz.sh; e.g. FUZZTIME=1000000x).
# Under `make test` each runs for FUZZTIME_TEST, which keeps the whole run
# within about three minutes on two CPUs.
FUZZTIME      ?= 10s
FUZZTIME_TEST ?= 2s
test: FUZZTIME = $(FUZZTIME_TEST)
# A short run starts from the committed seeds only: a corpus that an earlier
# long campaign left in the Go cache can take longer than FUZZTIME just to be
# replayed, and go test then fails the target for its deadline.
test: FUZZCLEAN = 1

# kube-apiserver, etcd, kubectl and kwok built from Go modules, and helm, all
# cached under .cache/ (cold: several minutes; warm: instant).
k8s-tools:
	hack/build-controlplane.sh
	hack/helm-check.sh --install-only

lint: tools
	$(GO) vet ./...
	$(TOOLS)/staticcheck ./...

unit:
	$(GO) test -count=1 ./...

fuzz:
	if [ "$(FUZZCLEAN)" = 1 ]; then $(GO) clean -fuzzcache; fi
	FUZZTIME=$(FUZZTIME) hack/fuzz.sh

bench-vet:
	cd bench && $(GO) vet ./... && $(GO) test -count=1 -run . ./...

# Real-kernel NUMA tests in a QEMU guest; as root it installs qemu, cpio,
# numactl and busybox-static with apt. Packages run there: test/numavm/packages.
numa-test:
	bash test/numavm/run.sh

# End-to-end tests on a real one-node cluster of this machine (root; installs
# containerd and runc with apt when missing): docs/e2e.md.
e2e:
	hack/e2e.sh test
	LOCUS_E2E_RUNTIME=containerd2 hack/e2e.sh test -run TestPinned

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...
	bench/packing.sh
	bench/agent/run.sh

# Kill -9 campaign (root, cgroup v1): the standalone agent killed at random
# points of its start, ROUNDS rounds (default 100, a few minutes), in a
# cgroup sub-tree of its own; docs/reliability.md.
crash: locus
	LOCUS=$(BIN)/locus bench/crash/run.sh

tools: $(TOOLS)/staticcheck

$(TOOLS)/staticcheck:
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

clean:
	rm -rf $(BIN)
