package numad

import (
	"strings"
	"testing"
)

// The command lines libvirt and operators pass, read as numad 20150602
// reads them: what is printed where, and the exit status.
func TestParseAsNumad(t *testing.T) {
	usage := Usage("numad")
	for _, tc := range []struct {
		args           []string
		query          *Query
		stdout, stderr string
		exit           int
	}{
		// libvirt's own form, "%d:%llu".
		{args: []string{"-w", "2:1024"}, query: &Query{CentiCPUs: 200, MB: 1024}},
		{args: []string{"-w2:1024"}, query: &Query{CentiCPUs: 200, MB: 1024}},
		{args: []string{"-w", "4"}, query: &Query{CentiCPUs: 400}},
		{args: []string{"-w", "1.5:100"}, query: &Query{CentiCPUs: 150, MB: 100}},
		{args: []string{"-w", "1.256"}, query: &Query{CentiCPUs: 125}}, // numad keeps two decimals
		{args: []string{"-w", "0"}, query: &Query{}},
		{args: []string{"-w", "1", "-w", "3:5"}, query: &Query{CentiCPUs: 300, MB: 5}}, // the last one counts
		// Logging options change nothing numad answers.
		{args: []string{"-d", "-w", "1"}, query: &Query{CentiCPUs: 100}},
		{args: []string{"-vw", "1"}, query: &Query{CentiCPUs: 100}},
		{args: []string{"-l", "7", "-D", "x", "-w", "1"}, query: &Query{CentiCPUs: 100}},
		{args: []string{"-V"}, stdout: "numad version: 20150602: Locus's numad entry point\n"},
		{args: []string{"-V", "-w", "x"}, stdout: "numad version: 20150602: Locus's numad entry point\n"},
		{args: []string{"-h"}, stderr: usage, exit: 1},
		{args: []string{"-w"}, stderr: "numad: option requires an argument -- 'w'\n" + usage, exit: 1},
		{args: []string{"-Z"}, stderr: "numad: invalid option -- 'Z'\n" + usage, exit: 1},
		{args: []string{"--help"}, stderr: "numad: invalid option -- '-'\n" + usage, exit: 1},
		{args: []string{"-w", "1", "extra"}, stderr: "Unexpected arg = extra\n", exit: 1},
		{args: []string{"extra", "-w", "1"}, stderr: "Unexpected arg = extra\n", exit: 1},
		{args: []string{"-w", "1", "--", "-V"}, stderr: "Unexpected arg = -V\n", exit: 1},
		// numad's own refusals, word for word.
		{args: []string{"-w", "x:y"}, stderr: "Can't parse arg value(s): x:y\n", exit: 1},
		{args: []string{"-w", "-1"}, stderr: "Can't parse arg value(s): -1\n", exit: 1},
		{args: []string{"-w", "1:-5"}, stderr: "Can't parse arg value(s): 1:-5\n", exit: 1},
		{args: []string{"-w", "1:x"}, stderr: "Can't parse arg value(s): 1:x\n", exit: 1},
		{args: []string{"-w", ""}, stderr: "Can't parse arg value(s): \n", exit: 1},
		// What numad misreads, refused by name.
		{args: []string{"-w", "1e"}, stderr: "numad: -w 1e: unexpected \"e\" after the number(s): want NCPUS[:MB]\n", exit: 1},
		{args: []string{"-w", "99999999999"}, stderr: "numad: -w 99999999999: more than 65536 CPUs, more than any machine has\n", exit: 1},
		{args: []string{"-w", "65537:1"}, stderr: "numad: -w 65537:1: more than 65536 CPUs, more than any machine has\n", exit: 1},
		{args: []string{"-w", "1:1073741825"}, stderr: "numad: -w 1:1073741825: more than 1073741824 MB (1 PiB) of memory, more than any machine has\n", exit: 1},
		{args: []string{"-w", "1:99999999999999999999999"}, stderr: "numad: -w 1:99999999999999999999999: more than 1073741824 MB (1 PiB) of memory, more than any machine has\n", exit: 1},
	} {
		got := Parse("numad", tc.args)
		if (got.Query == nil) != (tc.query == nil) || (got.Query != nil && *got.Query != *tc.query) {
			t.Errorf("%q: query %+v, want %+v", tc.args, got.Query, tc.query)
		}
		if got.Stdout != tc.stdout || got.Stderr != tc.stderr || got.Exit != tc.exit {
			t.Errorf("%q: stdout %q stderr %q exit %d\nwant stdout %q stderr %q exit %d",
				tc.args, got.Stdout, got.Stderr, got.Exit, tc.stdout, tc.stderr, tc.exit)
		}
	}
}

// Whatever steers numad's daemon, or starts it, is refused on stderr with a
// non-zero exit, naming the option and pointing at the agent; no question is
// answered with an option that would have changed numad's answer.
func TestParseDaemonOptionsNotSupported(t *testing.T) {
	for _, opt := range []string{"-C", "-H", "-i", "-K", "-m", "-p", "-r", "-R", "-S", "-t", "-u", "-x"} {
		for _, args := range [][]string{{opt, "1"}, {opt, "1", "-w", "2:100"}, {"-w", "2:100", opt + "1"}} {
			got := Parse("numad", args)
			if got.Query != nil || got.Exit != 1 || got.Stdout != "" ||
				!strings.Contains(got.Stderr, opt+" is not supported by locus numad: use the locus agent") {
				t.Errorf("%q: %+v, want exit 1 saying %s is not supported", args, got, opt)
			}
		}
	}
	for _, args := range [][]string{nil, {"-d"}, {"-v"}, {"-l", "7"}} {
		got := Parse("numad", args)
		if got.Query != nil || got.Exit != 1 || !strings.Contains(got.Stderr, "running numad as a daemon is not supported by locus numad") {
			t.Errorf("%q: %+v, want exit 1 saying the daemon is not supported", args, got)
		}
	}
}

// Hostile command lines get short messages: a huge value or operand is not
// repeated whole, control characters are escaped.
func TestParseHostileArgs(t *testing.T) {
	huge := strings.Repeat("9", 1<<20)
	for _, args := range [][]string{
		{"-w", huge}, {"-w", "1", huge}, {"-w", "1\x1b[2J"}, {"-w", "1", "x\ny"},
		make([]string, MaxArgs+1), {"-\x00"},
	} {
		got := Parse("numad", args)
		first, _, _ := strings.Cut(got.Stderr, "\n")
		if got.Exit != 1 || got.Query != nil || len(got.Stderr) > 1024 || strings.ContainsAny(first, "\x00\x1b") {
			t.Errorf("%.40q: exit %d, stderr %.200q", args, got.Exit, got.Stderr)
		}
	}
}
