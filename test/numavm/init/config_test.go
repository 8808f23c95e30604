package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, env, args, cmdline string
		wantEnv, wantArgs        []string
		wantCgroup, wantErr      string
	}{
		{
			name:       "files only, cgroup defaults to v2",
			env:        "LOCUS_NUMAVM_NODES=2\n\n# comment\nLOCUS_NUMAVM_NODE_CPUS=0-1;2-3\n",
			args:       "-test.timeout=5m\n\n-test.count=1\n",
			cmdline:    "console=ttyS0 quiet\n",
			wantEnv:    []string{"LOCUS_NUMAVM=1", "LOCUS_NUMAVM_CGROUP=v2", "LOCUS_NUMAVM_NODES=2", "LOCUS_NUMAVM_NODE_CPUS=0-1;2-3"},
			wantArgs:   []string{"-test.timeout=5m", "-test.count=1"},
			wantCgroup: "v2",
		},
		{
			name:       "kernel parameters override and add",
			env:        "LOCUS_NUMAVM_CGROUP=v2\nLOCUS_NUMAVM_NODES=2\n",
			cmdline:    `console=ttyS0 numavm.cgroup=v1 numavm.run="^TestA$|B c" numavm.extra-flag=on other.x=1`,
			wantEnv:    []string{"LOCUS_NUMAVM=1", "LOCUS_NUMAVM_CGROUP=v1", "LOCUS_NUMAVM_EXTRA_FLAG=on", "LOCUS_NUMAVM_NODES=2"},
			wantArgs:   []string{"-test.run=^TestA$|B c"},
			wantCgroup: "v1",
		},
		{name: "env line without =", env: "LOCUS_NUMAVM_NODES\n", wantErr: `line 1: "LOCUS_NUMAVM_NODES" is not KEY=VALUE`},
		{name: "empty key", env: "=2\n", wantErr: "is not KEY=VALUE"},
		{name: "unknown cgroup mode", cmdline: "numavm.cgroup=v3", wantErr: `LOCUS_NUMAVM_CGROUP="v3": want v1 or v2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfig(tt.env, tt.args, tt.cmdline)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.env, tt.wantEnv) {
				t.Errorf("env = %q, want %q", cfg.env, tt.wantEnv)
			}
			if !slices.Equal(cfg.args, tt.wantArgs) {
				t.Errorf("args = %q, want %q", cfg.args, tt.wantArgs)
			}
			if cfg.cgroup != tt.wantCgroup {
				t.Errorf("cgroup = %q, want %q", cfg.cgroup, tt.wantCgroup)
			}
		})
	}
}

func TestSplitCmdline(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  a  b\n", []string{"a", "b"}},
		{`k="a b" c`, []string{"k=a b", "c"}},
		{`"k=a b"`, []string{"k=a b"}},
		{`k=""`, []string{"k="}},
	}
	for _, tt := range tests {
		if got := splitCmdline(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("splitCmdline(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTally(t *testing.T) {
	tests := []struct {
		name    string
		lines   []string
		exitErr error
		want    tally
	}{
		{
			name: "top-level verdicts only",
			lines: []string{"=== RUN   TestA", "--- PASS: TestA (0.00s)", "    --- FAIL: TestB/sub (0.00s)",
				"--- FAIL: TestB (0.00s)", "--- SKIP: TestC (0.00s)", "PASS"},
			exitErr: errors.New("exit status 1"),
			want:    tally{pass: 1, fail: 1, skip: 1},
		},
		{
			name:    "crash without a failing test line counts once",
			lines:   []string{"--- PASS: TestA (0.00s)", "panic: boom"},
			exitErr: errors.New("exit status 2"),
			want:    tally{pass: 1, fail: 1},
		},
		{name: "clean exit", lines: []string{"--- PASS: TestA (0.00s)"}, want: tally{pass: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got tally
			for _, l := range tt.lines {
				got.line(l)
			}
			got.settle(tt.exitErr)
			if got != tt.want {
				t.Errorf("tally = %v, want %v", got, tt.want)
			}
		})
	}
	total := tally{pass: 1}
	total.add(tally{pass: 2, fail: 3, skip: 4})
	if total.String() != "pass=3 fail=3 skip=4" {
		t.Errorf("sum = %s", total)
	}
}

func TestParseTests(t *testing.T) {
	tests := []struct {
		name, text string
		want       []testBinary
		wantErr    string
	}{
		{
			name: "two binaries",
			text: "example.com/a\t/tests/a.test\t/pkgs/example.com/a\n\nexample.com/b\t/tests/b.test\t/pkgs/example.com/b\n",
			want: []testBinary{{"example.com/a", "/tests/a.test", "/pkgs/example.com/a"},
				{"example.com/b", "/tests/b.test", "/pkgs/example.com/b"}},
		},
		{name: "empty", text: "\n", wantErr: "lists no test binaries"},
		{name: "missing field", text: "example.com/a\t/tests/a.test\n", wantErr: "line 1"},
		{name: "empty field", text: "example.com/a\t\t/pkgs\n", wantErr: "is not package<TAB>binary<TAB>dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTests(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("parseTests = %v, %v, want %v", got, err, tt.want)
			}
		})
	}
}
