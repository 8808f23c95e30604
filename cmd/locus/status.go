package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology"
)

func newStatusCmd() *cobra.Command {
	var stateDir, output string
	cmd := &cobra.Command{
		Use:   "status [--state-dir DIR] [-o table|json]",
		Short: "Show what the agent decided for each workload",
		Long: `Show the agent's last status: per workload its QoS class, pool, CPUs, NUMA
nodes, memory QoS in force (read back from the cgroup), processes and problems,
after a one-line summary of the node.`,
		Args: rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			st, err := status.Read(stateDir)
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("no agent state in %s: is `locus agent` running?", stateDir)
			}
			if errors.Is(err, fs.ErrPermission) {
				return fmt.Errorf("reading the agent's state in %s needs root: run it with sudo", stateDir)
			}
			if err != nil {
				return err
			}
			running, err := state.Running(stateDir)
			if err != nil {
				return err
			}
			age := time.Since(st.Time).Round(time.Second)
			if output == "json" {
				err = writeJSON(cmd.OutOrStdout(), st)
			} else {
				err = renderStatus(cmd.OutOrStdout(), st, running, age)
			}
			if err == nil && !running {
				// The pools shown are those of the agent's last run; nothing
				// keeps them now, so a script must not take them as current.
				err = fmt.Errorf("the agent is not running: this status is %s old", age)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", agent.DefaultStateDir, "the agent's state directory")
	outputFlag(cmd, &output)
	return cmd
}

func renderStatus(w io.Writer, st status.Status, running bool, age time.Duration) error {
	n := st.Node
	if !running {
		fmt.Fprintf(w, "agent: not running; what follows is its last status, %s old\n", age)
	}
	fmt.Fprintf(w, "node: %s, cgroup %s; CPU lists: exclusive %s, shared %s, be %s, reserved %s (as of %s, %s ago)\n",
		n.Topology, n.CgroupVersion, orNone(n.Exclusive), orNone(n.Shared), orNone(n.BE), orNone(n.Reserved),
		st.Time.Local().Format("15:04:05"), age)
	if st.ConfigError != "" {
		fmt.Fprintf(w, "config error (last good config in force): %s\n", st.ConfigError)
	}
	if k := n.Kubelet; k != nil {
		fmt.Fprintf(w, "kubelet: CPU manager %s (its CPUs %s), topology manager %s/%s, memory manager %s, reservedSystemCPUs %s\n",
			k.CPUManagerPolicy, orNone(n.KubeletCPUs), orDash(k.TopologyManagerPolicy), orDash(k.TopologyManagerScope),
			orDash(k.MemoryManagerPolicy), orNone(k.ReservedCPUs))
		for _, e := range k.Errors {
			fmt.Fprintf(w, "kubelet file unreadable: %s\n", e)
		}
	}
	if p := n.Pinning; p != nil {
		fmt.Fprintln(w, pinningLine(*p))
	}
	if d := n.Devices; d != nil {
		fmt.Fprintln(w, devicesLine(*d))
	}
	for _, p := range n.Problems {
		fmt.Fprintf(w, "node problem: %s\n", p)
	}
	renderHostChecks(w, n.HostChecks)
	if len(n.Unsupported) > 0 {
		fmt.Fprintf(w, "unsupported by this kernel: %s\n", strings.Join(n.Unsupported, ", "))
	}
	for _, l := range n.CPUQoS {
		fmt.Fprintf(w, "CPU QoS: %s\n", l)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tQOS\tPOOL\tCPUS\tNUMA\tMEMORY\tMEM QOS\tCPU QOS\tPIDS\tPROBLEMS")
	for _, ws := range st.Workloads {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ws.Name, orDash(ws.QOSClass), orDash(ws.Pool),
			orDash(ws.CPUs), ints(ws.NUMANodes), memoryByNode(ws.MemoryByNode), memSummary(ws.MemoryQOS), cpuSummary(ws.CPUQOS), ints(ws.PIDs),
			orDash(strings.Join(ws.Problems, "; ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	renderParts(w, st.Workloads)
	return nil
}

// memoryByNode shows what a workload holds on each node, "0:4.0GiB
// 1:2.0GiB+hp2Mi:64.0MiB", or "-" when it holds nothing.
func memoryByNode(held []status.NodeMemory) string {
	var nodes []string
	for _, m := range held {
		var parts []string
		for _, k := range []struct {
			prefix string
			n      uint64
		}{{"", m.Bytes}, {"hp2Mi:", m.HugePages2Mi}, {"hp1Gi:", m.HugePages1Gi}} {
			if k.n > 0 {
				parts = append(parts, k.prefix+strings.ReplaceAll(topology.HumanBytes(k.n), " ", ""))
			}
		}
		if len(parts) > 0 {
			nodes = append(nodes, strconv.Itoa(m.Node)+":"+strings.Join(parts, "+"))
		}
	}
	return orDash(strings.Join(nodes, " "))
}

// memSummary shows min/low/high in binary units, or "off".
func memSummary(m status.MemQoSStatus) string {
	if !m.Enabled {
		return "off"
	}
	var parts []string
	for _, k := range []string{"min", "low", "high"} {
		v, ok := m.Values["memory."+k]
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(v, 10, 64); err == nil && n < 1<<62 {
			v = strings.ReplaceAll(topology.HumanBytes(n), " ", "")
		}
		parts = append(parts, k+"="+v)
	}
	if len(parts) == 0 {
		return "on (no files)"
	}
	return strings.Join(parts, " ")
}

// cpuSummary shows the CPU QoS in force: idle (cpu.idle 1), the weight
// read back, or off; and core isolation when asked for.
func cpuSummary(c status.CPUQoSStatus) string {
	s := "off"
	switch {
	case c.Values["cpu.idle"] == "1":
		s = "idle"
	case strings.HasSuffix(c.Reason, ": off") || c.Reason == "":
	case c.Values["cpu.shares"] != "":
		s = "shares=" + c.Values["cpu.shares"]
	case c.Values["cpu.weight"] != "":
		s = "weight=" + c.Values["cpu.weight"]
	}
	switch {
	case strings.Contains(c.CoreIsolation, "not applied"):
		s += ",core-isolation-unavailable"
	case c.CoreIsolation != "" && !strings.Contains(c.CoreIsolation, "not asked"):
		s += ",core-isolated"
	}
	// CPU Burst: the burst buffer and, while the quota raise is on, the
	// quota, as read back from the workload's cgroup (v1 or v2 files).
	for _, f := range []string{"cpu.cfs_burst_us", "cpu.max.burst"} {
		if b := c.Values[f]; b != "" && b != "0" {
			s += ",burst=" + b + "us"
		}
	}
	if c.CFSQuotaBurst != "" {
		for _, f := range []string{"cpu.cfs_quota_us", "cpu.max"} {
			if q := strings.Fields(c.Values[f]); len(q) > 0 {
				s += ",quota=" + q[0]
			}
		}
	}
	return s
}

func ints(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// renderHostChecks counts the host checks and shows the ones not ok.
func renderHostChecks(w io.Writer, cs []status.HostCheck) {
	if len(cs) == 0 {
		return
	}
	count := map[string]int{}
	for _, c := range cs {
		count[c.Status]++
	}
	fmt.Fprintf(w, "host checks at agent start: %d ok, %d warn, %d fail, %d n/a (locus doctor for all)\n",
		count["ok"], count["warn"], count["fail"], count["n/a"])
	for _, c := range cs {
		if c.Status == "warn" || c.Status == "fail" {
			fmt.Fprintf(w, "host check %s %s: %s", c.Status, c.Check, oneLine(c.Found))
			if c.Do != "" {
				fmt.Fprintf(w, "; do: %s", oneLine(c.Do))
			}
			fmt.Fprintln(w)
		}
	}
}

// pinningLine says when the node's containers get their values, and what
// the watch of the pods' cgroups did.
func pinningLine(p status.Pinning) string {
	line := fmt.Sprintf("pinning: after start, by the reconcile loop (%s)", p.Reason)
	if p.Path == status.PinAtCreation {
		line = fmt.Sprintf("pinning: at creation, over NRI (%s)", p.Runtime)
	}
	if w := p.CgroupWatch; w != nil {
		watch := "on"
		if w.Problem != "" {
			watch = "not everywhere: " + w.Problem
		}
		line += fmt.Sprintf("; cgroup watch %s, %d directories, %d new containers given their pod's cpuset as their cgroup appeared", watch, w.Watched, w.EarlyWrites)
	}
	return line
}

// devicesLine says where the devices containers hold were read, or why
// they could not be.
func devicesLine(d status.Devices) string {
	if d.Problem != "" {
		return fmt.Sprintf("devices: none known: %s", oneLine(d.Problem))
	}
	return fmt.Sprintf("devices: from the kubelet's PodResources (%s): %d containers hold %d devices; the plugins offer %d, %d with NUMA nodes",
		d.Source, d.Containers, d.Held, d.Allocatable, d.WithTopology)
}
