package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cliEdge is one invocation at the edge of the command line: its exit status,
// what its error must say and must not say, and what stdout must hold.
type cliEdge struct {
	name   string
	args   []string
	code   int
	errHas string // the error names the flag and the value or file
	errNot string // an internal detail the user did not write
	outHas string // on stdout ("" for anything)
	outNot string // never on stdout
}

// Every edge of the command line has a named error and a uniform status:
// 2 for what the caller wrote wrong, 1 for what failed at run time.
func TestCLIEdges(t *testing.T) {
	sys := fixtureTree(t, "small-1s-4c") // CPUs 0-3, one node, no SMT
	endless := symlinkDir(t, "/dev/zero", "status.json", "events.jsonl")
	noTime := t.TempDir()
	writeFile(t, filepath.Join(noTime, "events.jsonl"),
		`{"type":"Normal","reason":"Hand","message":"written without a time"}`+"\n"+
			`{"time":"2026-01-02T03:04:05Z","type":"Normal","reason":"Timed","message":"with one"}`+"\n")
	missing := filepath.Join(t.TempDir(), "missing.json")
	svgDir := filepath.Join(t.TempDir(), "absent")
	for _, tc := range []cliEdge{
		{name: "unknown command", args: []string{"bogus"}, code: 2, errHas: `unknown command "bogus"`},
		{name: "unknown command near one", args: []string{"stauts"}, code: 2, errHas: `did you mean "status"`},
		{name: "unknown flag", args: []string{"status", "--bogus"}, code: 2, errHas: "--bogus"},
		{name: "topology not JSON", args: []string{"plan", "--cpus", "1", "--topology", "/etc/passwd"}, code: 2,
			errHas: "--topology /etc/passwd: not a machine as `locus topology -o json` writes it: it is not JSON",
			errNot: "invalid character"},
		{name: "topology endless", args: []string{"plan", "--cpus", "1", "--topology", "/dev/zero"}, code: 2,
			errHas: "--topology /dev/zero: larger than 8 MiB"},
		{name: "topology wrong shape", args: []string{"plan", "--cpus", "1", "--topology", writeTemp(t, `{"cpus":{}}`)},
			code: 2, errHas: "field cpus holds a JSON object, want an array", errNot: "topology json"},
		{name: "topology missing", args: []string{"plan", "--cpus", "1", "--topology", missing}, code: 1,
			errHas: "--topology: open " + missing},
		{name: "run config endless", args: []string{"run", "--dry-run", "--sysfs-root", sys, "--cgroup-root", t.TempDir(),
			"--cgroup-version", "v1", "--state-dir", t.TempDir(), "--config", "/dev/zero", "--", "true"},
			code: 2, errHas: "--config: /dev/zero: larger than 16 MiB"},
		{name: "status endless", args: []string{"status", "--state-dir", endless}, code: 1, errHas: "status.json: larger than 64 MiB"},
		{name: "events endless", args: []string{"events", "--state-dir", endless}, code: 1, errHas: "events.jsonl: larger than 16 MiB"},
		{name: "events without time", args: []string{"events", "--state-dir", noTime}, outHas: "\n-" + strings.Repeat(" ", 20) + "Normal  Hand",
			outNot: "0001-01-01"},
		{name: "events without time json", args: []string{"events", "--state-dir", noTime, "-o", "json"},
			outHas: `"time": "2026-01-02T03:04:05Z"`, outNot: "0001-01-01"},
		{name: "top negative width", args: []string{"top", "--once", "--width", "-5"}, code: 2, errHas: "--width -5 is negative"},
		{name: "top negative height", args: []string{"top", "--once", "--height", "-1"}, code: 2, errHas: "--height -1 is negative"},
		{name: "top huge width", args: []string{"top", "--once", "--width", "1000000"}, code: 2, errHas: "--width 1000000 is over 10000"},
		{name: "top width without once", args: []string{"top", "--width", "80"}, code: 2, errHas: "--width is for --once"},
		{name: "svg into a missing directory", args: []string{"topology", "--sysfs-root", sys, "--svg", svgDir + "/map.svg"},
			code: 1, errHas: "--svg " + svgDir + "/map.svg: no such file or directory", errNot: ".tmp"},
		{name: "static-burst request over the limit", args: []string{"plan", "--sysfs-root", sys, "--cpus", "2",
			"--policy", "static-burst", "--request-milli", "5000"}, code: 2,
			errHas: "--request-milli 5000 is over --cpus 2 (2000 millicores)", errNot: "requestMilli"},
		{name: "plan CPUs beyond any machine", args: []string{"plan", "--sysfs-root", sys, "--cpus", "9223372036854775807",
			"--policy", "static-burst", "--request-milli", "1"}, code: 2, errHas: "--cpus 9223372036854775807: more than 65536 CPUs"},
		{name: "request-milli negative", args: []string{"plan", "--sysfs-root", sys, "--cpus", "2",
			"--policy", "static-burst", "--request-milli", "-1"}, code: 2, errHas: "--request-milli -1 is negative"},
		{name: "request-milli without static-burst", args: []string{"plan", "--sysfs-root", sys, "--cpus", "2",
			"--request-milli", "500"}, code: 2, errHas: "--request-milli is for --policy static-burst only"},
		{name: "plan memory negative", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1", "--memory", "-1Gi"},
			code: 2, errHas: "--memory -1Gi is negative"},
		{name: "plan huge pages in part", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1", "--hugepages-2Mi", "1Mi"},
			code: 2, errHas: "--hugepages-2Mi 1Mi is not a whole number of 2.0 MiB pages"},
		{name: "plan huge pages of a size a pod cannot ask for", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1",
			"--hugepages-4Mi", "4Mi"}, code: 2, errHas: "--hugepages-4Mi"},
		{name: "plan memory held on no such node", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1",
			"--memory-held", "3=1Gi"}, code: 2, errHas: "--memory-held: 3 is not a NUMA node of this machine"},
		{name: "plan holding named twice", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1",
			"--holding", "a=0", "--holding", "a=1"}, code: 2, errHas: `--holding "a=1": the name "a" is given twice`},
		{name: "plan holdings overlap", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1",
			"--holding", "a=0-1", "--holding", "b=1-2"}, code: 2, errHas: `--holding "b=1-2": CPUs 1 are also held by "a"`},
		{name: "plan holding beyond the machine", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1",
			"--holding", "a=2-9"}, code: 2, errHas: `--holding "a=2-9": CPUs 4-9 are not online CPUs of this machine (0-3)`},
		{name: "plan movable names no holding", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1",
			"--holding", "a=0", "--movable", "b", "--allow-moves"}, code: 2, errHas: `--movable "b": no --holding has that name`},
		{name: "plan holding of no CPUs", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1",
			"--holding", "a="}, code: 2, errHas: `--holding "a=": holds no CPUs`},
		{name: "plan holding not a list", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1",
			"--holding", "a=x"}, code: 2, errHas: `--holding "a=x"`},
		{name: "plan moves impossible", args: []string{"plan", "--sysfs-root", sys, "--cpus", "3",
			"--holding", "a=0-1", "--allow-moves"}, code: 2, errHas: "--allow-moves: no moves give --cpus 3 its usual placement: no movable workload holds CPUs"},
		{name: "plan near a malformed device", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1",
			"--near-device", "3b:00"}, code: 2, errHas: `--near-device: pci address "3b:00": want [domain:]bus:device.function`},
		{name: "plan near a device the machine lacks", args: []string{"plan", "--sysfs-root", sys, "--cpus", "1",
			"--near-device", "0000:3b:00.0"}, code: 2, errHas: `--near-device "0000:3b:00.0": no PCI device of that address on this machine`},
		{name: "run memory beyond any machine", args: []string{"run", "--dry-run", "--memory-limit", "1e19", "--", "true"},
			code: 2, errHas: "--memory-limit 1e19: more than 1Pi"},
		{name: "stress memory beyond any machine", args: []string{"stress", "--memory", "9223372036854775807"},
			code: 2, errHas: "--memory 9223372036854775807: more than 1Pi"},
		{name: "run dry-run names the flag", args: []string{"run", "--dry-run", "--sysfs-root", sys, "--cgroup-root", t.TempDir(),
			"--cgroup-version", "v1", "--state-dir", filepath.Join(t.TempDir(), "state"), "--memory-request", "50Mi",
			"--memory-qos", "auto", "--", "true"}, outHas: "memory QoS                   on: --memory-qos auto: recommended LS profile", outNot: "annotation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runLocus(t, tc.args...)
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			code := 0
			if err != nil {
				code = exitCode(err)
			}
			if code != tc.code {
				t.Fatalf("locus %s: exit %d (%v), want %d", strings.Join(tc.args, " "), code, err, tc.code)
			}
			if !strings.Contains(msg, tc.errHas) || tc.errNot != "" && strings.Contains(msg, tc.errNot) {
				t.Errorf("locus %s: error %q, want it to say %q and not %q", strings.Join(tc.args, " "), msg, tc.errHas, tc.errNot)
			}
			if !strings.Contains(out, tc.outHas) || tc.outNot != "" && strings.Contains(out, tc.outNot) {
				t.Errorf("locus %s: printed\n%s\nwant %q and not %q", strings.Join(tc.args, " "), out, tc.outHas, tc.outNot)
			}
		})
	}
}

// symlinkDir is a directory whose files named are links to target.
func symlinkDir(t *testing.T, target string, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Symlink(target, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.json")
	writeFile(t, path, content)
	return path
}

// A stray argument is a usage error in every command that takes none, before
// the command does anything.
func TestEveryCommandRefusesStrayArguments(t *testing.T) {
	n := 0
	for _, c := range newRootCmd().Commands() {
		if c.Hidden || c.Name() == "run" || c.Name() == "numad" || c.Name() == "help" || c.Name() == "completion" {
			// run's arguments are its command; numad's are numad's, refused
			// as numad refuses them (exit 1, TestParseAsNumad); help and
			// completion are cobra's.
			continue
		}
		n++
		_, err := runLocus(t, c.Name(), "stray")
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), `"stray"`) {
			t.Errorf("locus %s stray: %v (exit %d), want a usage error naming it", c.Name(), err, exitCode(err))
		}
	}
	if n < 10 {
		t.Errorf("only %d commands checked", n)
	}
}
