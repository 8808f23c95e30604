# Locus build, test and benchmark entry points. CI calls `make test` (see .ci/run).
GO        ?= go
BIN       := bin
TOOLS     := $(CURDIR)/.cache/bin
STATICCHECK_VERSION := v0.8.2
export CGO_ENABLED ?= 0
# The binaries' `version` is the chart's appVersion on a release commit (tagged
# v<appVersion>), and <appVersion>-dev+<commit> on any other, so that no two
# commits' builds say the same (hack/version.sh); the images' tag (IMAGE_TAG) is
# the same with '.' for '+', which tags cannot hold: on a release, the appVersion
# the chart installs by default.
VERSION   ?= $(shell hack/version.sh)
IMAGE_TAG ?= $(shell hack/version.sh --image-tag)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X github.com/locus-project/locus/cmd/internal/buildinfo.version=$(VERSION) \
	-X github.com/locus-project/locus/cmd/internal/buildinfo.commit=$(COMMIT)
IMAGES    := _output/images
export VERSION IMAGE_TAG COMMIT

.PHONY: build locus locus-scheduler images push run version test test-deps k8s-tools lint unit fuzz bench-vet numa-test e2e bench crash tools clean

build: locus locus-scheduler

locus:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/locus ./cmd/locus

# kube-scheduler with Locus's plugin; the only binary built from k8s.io/kubernetes.
locus-scheduler:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/locus-scheduler ./cmd/locus-scheduler

# OCI archives of the locus and locus-scheduler images for linux/amd64 and
# linux/arm64 in _output/images, no container daemon needed (hack/images.sh;
# PLATFORMS=linux/amd64 for one). Each build says when it starts and ends.
images:
	hack/images.sh $(IMAGES)

# Pushes what `make images` built as REGISTRY/locus:IMAGE_TAG and
# REGISTRY/locus-scheduler:IMAGE_TAG, with the credentials of `docker login`.
push:
	@test -n "$(REGISTRY)" || { echo "push: no registry: make push REGISTRY=ghcr.io/you" >&2; exit 2; }
	@test -f $(IMAGES)/locus.oci.tar && test -f $(IMAGES)/locus-scheduler.oci.tar || \
		{ echo "push: no image archives in $(IMAGES): run make images first" >&2; exit 2; }
	@cd tools/oci && $(GO) build -o $(TOOLS)/oci .
	@$(TOOLS)/oci push -registry "$(REGISTRY)" $(IMAGES)/locus.oci.tar $(IMAGES)/locus-scheduler.oci.tar

# The main job with its embedded default: the standalone agent managing two
# demo workloads (LS bound to its own CPU, BE in the BE pool) until Ctrl-C.
run: locus
	$(BIN)/locus agent --standalone

# Every test: static checks, unit and real-kernel tests (the Kubernetes ones
# against a real kube-apiserver and etcd), the benchmark module's own tests
# (built against k8s.io/kubernetes, kept out of the main module), the NUMA
# tests in a multi-node QEMU guest, and the end-to-end tests on a real node.
# The fuzz targets' seeds run in unit (go test runs them as tests), and each
# target is then fuzzed for FUZZTIME_TEST executions. First, test-deps says
# what all that does on this machine and installs the Debian packages it needs.
# The steps run one after the other, each timed (hack/timed.sh): each ends with
# "step NAME: N s", the e2e and NUMA steps' parts too, and the run ends with the
# list of them all, or stops at the first that fails.
TEST_STEPS := test-deps k8s-tools lint unit fuzz bench-vet numa-test e2e
STEP_TIMES ?= $(CURDIR)/.cache/step-times
test:
	@mkdir -p $(dir $(STEP_TIMES)) && : >$(STEP_TIMES)
	@export STEP_TIMES=$(STEP_TIMES); start=$$(date +%s); for s in $(TEST_STEPS); do \
		hack/timed.sh $$s $(MAKE) --no-print-directory $$s FUZZTIME=$(FUZZTIME) FUZZJOBS=$(FUZZJOBS) FUZZCLEAN=$(FUZZCLEAN) || \
		{ echo "make test: step $$s failed; the steps' times:"; cat $(STEP_TIMES); exit 1; }; \
	done; echo "make test: every step passed in $$(($$(date +%s) - start)) s:"; cat $(STEP_TIMES)

# What make test does here (packages, builds, guests, a kubelet), said before
# it starts; then the missing Debian packages, installed with apt-get as root.
test-deps:
	hack/test-deps.sh

# Every fuzz target for FUZZTIME each (hack/fuzz.sh; e.g. FUZZTIME=1000000x).
# Under `make test` each runs for FUZZTIME_TEST executions: a count, not a
# duration, so a loaded machine makes it slower, never flaky (Go 1.26's
# coordinator can fail a duration-bounded run at its deadline, go.dev/issue/75804),
# and the whole run stays within a few minutes on two CPUs.
FUZZTIME      ?= 10s
FUZZTIME_TEST ?= 5000x
test: FUZZTIME = $(FUZZTIME_TEST)
# Two targets at a time (hack/fuzz.sh, FUZZJOBS): on two CPUs it saves little,
# since building a target's binary already takes both (docs/reliability.md).
FUZZJOBS      ?= 1
test: FUZZJOBS = 2
# A short run starts from the committed seeds only: replaying the corpus an
# earlier long campaign left in the Go cache would take longer than the run.
test: FUZZCLEAN = 1

# kube-apiserver, etcd, kubectl and kwok built from Go modules, and helm, all
# cached under .cache/ (cold: several minutes; warm: instant).
k8s-tools:
	hack/build-controlplane.sh
	hack/helm-check.sh --install-only

# tools/oci is a module of its own (go-containerregistry stays out of the main one).
lint: tools
	$(GO) vet ./...
	$(TOOLS)/staticcheck ./...
	cd tools/oci && $(GO) vet ./... && $(TOOLS)/staticcheck ./...

unit:
	$(GO) test -count=1 ./...
	cd tools/oci && $(GO) test -count=1 ./...

fuzz:
	if [ "$(FUZZCLEAN)" = 1 ]; then $(GO) clean -fuzzcache; fi
	FUZZTIME=$(FUZZTIME) FUZZJOBS=$(FUZZJOBS) hack/fuzz.sh

bench-vet:
	cd bench && $(GO) vet ./... && $(GO) test -count=1 -run . ./...

# Real-kernel NUMA tests in a QEMU guest; as root it installs qemu, cpio,
# numactl, busybox-static and curl with apt. Packages run there:
# test/numavm/packages. A second, small guest boots Ubuntu's kernel (it has
# core scheduling, Debian's has not) with two threads a core for core
# isolation (test/numavm/coresched), its vCPUs on one TCG thread
# (test/numavm/README.md, Kernels).
numa-test:
	hack/timed.sh "numa-test: the NUMA guest" bash test/numavm/run.sh
	hack/timed.sh "numa-test: the core-scheduling guest" \
		bash test/numavm/run.sh --kernel ubuntu --threads 2 --tcg single --pkgs ./test/numavm/coresched

# End-to-end tests on a real one-node cluster of this machine (root; installs
# containerd and runc with apt when missing): docs/e2e.md. Each node, once its
# tests ran, has its kubelet switched to the static CPU manager in place for the
# variant beside it (LOCUS_E2E_THEN_STATIC; no second bring-up): the default
# node with containerd 1.6, then one with containerd 2 (NRI), and last one inside
# a QEMU guest with cgroup v2 and two NUMA nodes (hack/e2e-guest.sh).
e2e:
	LOCUS_E2E_THEN_STATIC='TestKubeletStaticCPUManager|TestHostChecksOnTheNode' \
		hack/timed.sh "e2e: the node, then its static CPU manager" hack/e2e.sh test
	LOCUS_E2E_RUNTIME=containerd2 LOCUS_E2E_THEN_STATIC=TestKubeletStaticCPUManager \
		hack/timed.sh "e2e: containerd 2, then its static CPU manager" hack/e2e.sh test -run TestPinned
	hack/timed.sh "e2e: the guest's node" hack/e2e-guest.sh

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

# The version the binaries are stamped with (hack/version.sh).
version:
	@echo $(VERSION)

clean:
	rm -rf $(BIN) _output
