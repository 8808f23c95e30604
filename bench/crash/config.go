package main

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

const (
	mib        = int64(1) << 20
	requestMiB = 32 // requests.memory of every workload: memory.low (and the v1 soft limit) is a percentage of it
)

// workload is one entry of the HostConfig, in the terms the campaign varies.
type workload struct {
	Name string
	// External workloads live in a cgroup the campaign made and filled with
	// a process of its own (`cgroup:`): the agent writes their files and
	// must give every one back. The others are `command:` workloads, whose
	// cgroup and process the agent makes and must remove.
	External   bool
	Class      string // LS or BE
	Pinned     bool   // cpuset-scheduler: CPUs of its own
	CPUs       int    // limits.cpu when pinned
	LimitMiB   int    // limits.memory; 0: none, so the original stays
	LowPercent int    // memory QoS lowLimitPercent; 0: policy none, so the original stays
	StopOnExit bool   // locus.io/stop-on-agent-exit: a clean stop removes it
}

// universe is every workload a config may hold. On two CPUs with nothing
// reserved only one CPU can be anyone's own, so two pinned workloads contend
// for it and a 2-CPU request is refused: both outcomes are part of what has
// to converge.
func universe() []workload {
	return []workload{
		{Name: "ext-a", External: true, Class: "LS", Pinned: true, CPUs: 1, LimitMiB: 96, LowPercent: 50},
		{Name: "ext-b", External: true, Class: "BE", LowPercent: 25},
		{Name: "cmd-a", Class: "LS", Pinned: true, CPUs: 1, LimitMiB: 64, LowPercent: 100},
		{Name: "cmd-b", Class: "BE", LimitMiB: 128},
		{Name: "cmd-c", Class: "LS", LowPercent: 50, StopOnExit: true},
	}
}

// config is the set of workloads present, by name.
type config map[string]workload

func (c config) names() []string {
	var ns []string
	for n := range c {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

func (c config) clone() config {
	out := config{}
	for n, w := range c {
		out[n] = w
	}
	return out
}

// baseConfig holds the first three workloads of the universe.
func baseConfig() config {
	c := config{}
	for _, w := range universe()[:3] {
		c[w.Name] = w
	}
	return c
}

var (
	limitChoices = []int{0, 64, 96, 128}
	lowChoices   = []int{0, 25, 50, 100}
)

// mutate returns a config that differs from c by one or two changes: a
// workload added or removed, a CPU count changed or pinning switched, memory
// QoS or the memory limit changed. At least one workload always remains.
func mutate(c config, rng *rand.Rand) config {
	all := universe()
	for {
		next := c.clone()
		for k := 1 + rng.IntN(2); k > 0; k-- {
			present := next.names()
			switch rng.IntN(4) {
			case 0: // add or remove
				w := all[rng.IntN(len(all))]
				if _, ok := next[w.Name]; ok && len(next) > 1 {
					delete(next, w.Name)
				} else if !ok {
					next[w.Name] = w
				}
			case 1: // CPUs
				w := next[present[rng.IntN(len(present))]]
				switch {
				case !w.Pinned:
					w.Pinned, w.CPUs = true, 1
				case rng.IntN(2) == 0:
					w.Pinned = false
				default:
					w.CPUs = 3 - w.CPUs // 1 <-> 2
				}
				next[w.Name] = w
			case 2: // memory QoS
				w := next[present[rng.IntN(len(present))]]
				w.LowPercent = other(lowChoices, w.LowPercent, rng)
				next[w.Name] = w
			case 3: // memory limit
				w := next[present[rng.IntN(len(present))]]
				w.LimitMiB = other(limitChoices, w.LimitMiB, rng)
				next[w.Name] = w
			}
		}
		if next.render("x") != c.render("x") {
			return next
		}
	}
}

func other(choices []int, cur int, rng *rand.Rand) int {
	for {
		if v := choices[rng.IntN(len(choices))]; v != cur {
			return v
		}
	}
}

// cgroupOf is the workload's cgroup, relative to the mount of each controller.
func cgroupOf(root string, w workload) string {
	if w.External {
		return root + "/ext/" + w.Name
	}
	return root + "/locus/" + w.Name
}

// render writes the HostConfig, workloads in name order.
func (c config) render(root string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nreservedCPUs: \"\"\ncgroupParent: %s/locus\n", root)
	if len(c) == 0 {
		b.WriteString("workloads: []\n")
		return b.String()
	}
	b.WriteString("workloads:\n")
	for _, n := range c.names() {
		w := c[n]
		fmt.Fprintf(&b, "- name: %s\n", w.Name)
		if w.External {
			fmt.Fprintf(&b, "  cgroup: %s\n", cgroupOf(root, w))
		} else {
			fmt.Fprintf(&b, "  command: [sleep, \"100000\"]\n")
		}
		fmt.Fprintf(&b, "  qosClass: %s\n", w.Class)
		req := []string{fmt.Sprintf("memory: %dMi", requestMiB)}
		var lim []string
		if w.Pinned {
			req = append(req, fmt.Sprintf("cpu: \"%d\"", w.CPUs))
			lim = append(lim, fmt.Sprintf("cpu: \"%d\"", w.CPUs))
		}
		if w.LimitMiB > 0 {
			lim = append(lim, fmt.Sprintf("memory: %dMi", w.LimitMiB))
		}
		fmt.Fprintf(&b, "  resources:\n    requests: {%s}\n", strings.Join(req, ", "))
		if len(lim) > 0 {
			fmt.Fprintf(&b, "    limits: {%s}\n", strings.Join(lim, ", "))
		}
		b.WriteString("  annotations:\n")
		if w.Pinned {
			b.WriteString("    cpuset-scheduler: \"true\"\n")
		}
		if w.LowPercent > 0 {
			fmt.Fprintf(&b, "    koordinator.sh/memoryQOS: '{\"policy\": \"auto\", \"lowLimitPercent\": %d}'\n", w.LowPercent)
		} else {
			b.WriteString("    koordinator.sh/memoryQOS: '{\"policy\": \"none\"}'\n")
		}
		if w.StopOnExit {
			b.WriteString("    locus.io/stop-on-agent-exit: \"true\"\n")
		}
	}
	return b.String()
}

// describe summarises a config in one line for the round log.
func (c config) describe() string {
	var parts []string
	for _, n := range c.names() {
		w := c[n]
		s := n
		if w.Pinned {
			s += fmt.Sprintf(" pin%d", w.CPUs)
		}
		if w.LimitMiB > 0 {
			s += fmt.Sprintf(" lim%dMi", w.LimitMiB)
		}
		if w.LowPercent > 0 {
			s += fmt.Sprintf(" low%d%%", w.LowPercent)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, ", ")
}
