package agent

import (
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
)

// A workload a user writes with request = limit (100 MiB) and the protocol's
// worked example, throttlingPercent 80 and minLimitPercent 100: the formulas
// apply as written on every cgroup layout where the files exist.
const guaranteedThrottled = head + `workloads:
- name: app
  cgroup: pods/app
  qosClass: LS
  resources:
    requests: {memory: 100Mi}
    limits: {memory: 100Mi}
  annotations:
    koordinator.sh/memoryQOS: '{"policy": "auto", "throttlingPercent": 80, "minLimitPercent": 100}'
`

func TestSeedThrottlingOnRequestEqualsLimit(t *testing.T) {
	for _, k := range treeKinds {
		t.Run(k.name, func(t *testing.T) {
			tree := newCgroupTree(t, k.v, k.anolis, "0-3")
			tree.mkcg("pods/app")
			h := newHarness(t, tree, guaranteedThrottled, nil)
			h.reconcile()
			want := map[string]string{"memory.high": "83886080", "memory.min": "104857600", "memory.low": "0"}
			if k.anolis {
				want["memory.wmark_ratio"], want["memory.wmark_min_adj"] = "95", "-25"
			}
			if k.v == cgroup.V1 && !k.anolis { // upstream v1 has none of these files
				want = map[string]string{"memory.high": "", "memory.min": ""}
			}
			for file, v := range want {
				if got := tree.file("pods/app", file); got != v {
					t.Errorf("%s = %q, want %q", file, got, v)
				}
			}
		})
	}
	// Locus's opt-in keeps memory.high out of the request: here, untouched.
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/app")
	h := newHarness(t, tree, guaranteedThrottled, func(o *Options) { o.ThrottleNotBelowRequest = true })
	h.reconcile()
	if got := tree.file("pods/app", "memory.high"); got != "max" {
		t.Errorf("with ThrottleNotBelowRequest memory.high = %q, want max", got)
	}
}
