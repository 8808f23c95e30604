package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// numadOn asks `numad` args on the machine whose sysfs tree is sys, idle,
// with an agent in stateDir that runs when running says so.
func numadOn(t *testing.T, sys string, stateDir string, running bool, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	env := numadEnv{sysfsRoot: sys, procRoot: idleProc(t, 1024),
		stateDir: stateDir, running: func(string) (bool, error) { return running, nil }}
	var out, errOut bytes.Buffer
	code = runNumad("numad", args, env, &out, &errOut)
	return out.String(), errOut.String(), code
}

// fixtureTrees writes each shape's sysfs tree once for a test.
func fixtureTrees(t *testing.T) func(fixture.Shape) string {
	trees := map[string]string{}
	return func(s fixture.Shape) string {
		if trees[s.Name] == "" {
			trees[s.Name] = fixtureTree(t, s.Name)
		}
		return trees[s.Name]
	}
}

// The numad contract: libvirt's -w questions on fixture machines, answered
// on one line as numad prints its node list, exit 0; when nothing fits,
// every node, as numad answers, so that the domain still starts.
func TestNumadContractOnFixtures(t *testing.T) {
	tree := fixtureTrees(t)
	for _, tc := range []struct {
		shape fixture.Shape
		w     string
		want  string
	}{
		{fixture.AMDNPS4, "4:1024", "0\n"}, // 8 nodes of 32 CPUs, 96 GiB free each
		{fixture.AMDNPS4, "1.5:64", "0\n"},
		{fixture.AMDNPS4, "0", "0\n"},
		{fixture.AMDNPS4, "40", "0-1\n"},           // two nodes of one socket
		{fixture.AMDNPS4, "100", "0-3\n"},          // the whole first socket
		{fixture.AMDNPS4, "16:100000", "0-1\n"},    // 97.7 GiB: more than one node has free
		{fixture.AMDNPS4, "1000", "0-7\n"},         // more CPUs than the machine: every node
		{fixture.AMDNPS4, "2:1073741824", "0-7\n"}, // 1 PiB: every node
		{fixture.Intel2S96C, "96:4096", "0\n"},     // a whole node of 96 CPUs
		{fixture.Intel2S96C, "97:4096", "0-1\n"},
		{fixture.MemoryOnly, "100", "0-2\n"}, // every node includes the one with memory only
	} {
		out, errOut, code := numadOn(t, tree(tc.shape), t.TempDir(), false, "-w", tc.w)
		if out != tc.want || errOut != "" || code != 0 {
			t.Errorf("%s: numad -w %s: stdout %q stderr %q exit %d, want %q exit 0", tc.shape.Name, tc.w, out, errOut, code, tc.want)
		}
	}
}

// numad's errors: nothing on stdout, exit 1, and the host untouched (the
// fixture trees are not even read: a bad question fails before).
func TestNumadErrors(t *testing.T) {
	env := numadEnv{sysfsRoot: "/nonexistent", procRoot: "/nonexistent", stateDir: "/nonexistent",
		running: func(string) (bool, error) { t.Error("the agent was looked for"); return false, nil }}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-w"}, "numad: option requires an argument -- 'w'\n"},
		{[]string{"-w", "x:y"}, "Can't parse arg value(s): x:y\n"},
		{[]string{"-w", "-4:1024"}, "Can't parse arg value(s): -4:1024\n"},
		{[]string{"-w", "4:1e3"}, `numad: -w 4:1e3: unexpected "e3" after the number(s)`},
		{[]string{"-w", "100000:1"}, "numad: -w 100000:1: more than 65536 CPUs"},
		{[]string{"-w", "1:2000000000"}, "numad: -w 1:2000000000: more than 1073741824 MB (1 PiB)"},
		{[]string{"-u", "90", "-w", "1"}, "numad: -u is not supported by locus numad: use the locus agent"},
		{[]string{"-i", "0"}, "numad: -i is not supported by locus numad: use the locus agent"},
		{nil, "numad: running numad as a daemon is not supported by locus numad: use the locus agent"},
	} {
		var out, errOut bytes.Buffer
		code := runNumad("numad", tc.args, env, &out, &errOut)
		if code != 1 || out.Len() != 0 || !strings.HasPrefix(errOut.String(), tc.want) {
			t.Errorf("numad %q: stdout %q stderr %q exit %d, want exit 1 with %q", tc.args, out.String(), errOut.String(), code, tc.want)
		}
	}
}

// What the running agent pinned is nobody else's: its CPUs and the memory
// its workloads hold move the advice; a stopped agent's last status pins
// nothing.
func TestNumadLeavesOutWhatTheAgentPinned(t *testing.T) {
	topo := fixture.MustBuild(fixture.AMDNPS4)
	node0 := topo.Nodes[0].CPUs.String()
	sys := fixtureTree(t, fixture.AMDNPS4.Name)
	for _, tc := range []struct {
		name    string
		st      status.Status
		running bool
		w, want string
	}{
		{"node 0's CPUs pinned", status.Status{Node: status.NodeStatus{Exclusive: node0}}, true, "4:1024", "1\n"},
		{"the kubelet's CPUs", status.Status{Node: status.NodeStatus{KubeletCPUs: node0}}, true, "4:1024", "1\n"},
		{"a stopped agent pins nothing", status.Status{Node: status.NodeStatus{Exclusive: node0}}, false, "4:1024", "0\n"},
		{"node 0's memory held", status.Status{Workloads: []status.WorkloadStatus{{Name: "db",
			MemoryByNode: []status.NodeMemory{{Node: 0, Bytes: 127 << 30}}}}}, true, "1:2048", "1\n"},
		{"every CPU pinned: every node", status.Status{Node: status.NodeStatus{Exclusive: topo.CPUSet().String()}}, true, "1", "0-7\n"},
	} {
		dir := t.TempDir()
		if err := status.Write(dir, tc.st); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := numadOn(t, sys, dir, tc.running, "-w", tc.w)
		if out != tc.want || code != 0 {
			t.Errorf("%s: stdout %q stderr %q exit %d, want %q", tc.name, out, errOut, code, tc.want)
		}
	}
	// A running agent whose status cannot be read is an error, not advice
	// that ignores what it pinned.
	dir := t.TempDir()
	if err := status.WriteEncoded(dir, []byte(`{"node":{"exclusivePool":"0-9223372036854775807"}}`)); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := numadOn(t, sys, dir, true, "-w", "1")
	if out != "" || code != 1 || !strings.Contains(errOut, "the agent's status: node.exclusivePool") {
		t.Errorf("unreadable status: stdout %q stderr %q exit %d", out, errOut, code)
	}
}

// `locus numad` is the same entry point, under locus's own name.
func TestLocusNumadCommand(t *testing.T) {
	out, err := runLocus(t, "numad", "-V")
	if err != nil || out != "locus numad version: 20150602: Locus's numad entry point\n" {
		t.Errorf("locus numad -V: %q %v", out, err)
	}
	out, err = runLocus(t, "numad", "-w", "x")
	if exitCode(err) != 1 || out != "Can't parse arg value(s): x\n" {
		t.Errorf("locus numad -w x: %q %v (exit %d)", out, err, exitCode(err))
	}
	if !invokedAsNumad("/usr/bin/numad") || !invokedAsNumad("numad") || invokedAsNumad("/usr/local/bin/locus") ||
		invokedAsNumad("/usr/bin/numad.real") {
		t.Error("invokedAsNumad: want numad by its base name only")
	}
}
