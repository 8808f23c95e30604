package main

import (
	"errors"
	"strings"
	"testing"
)

func TestStressRunsAndVerifies(t *testing.T) {
	out, err := runLocus(t, "stress", "--memory", "8Mi", "--cpu", "0.2", "--duration", "200ms",
		"--touch-interval", "50ms", "--verify")
	if err != nil {
		t.Fatalf("stress: %v\n%s", err, out)
	}
	// The form the agent's built-in demo workloads use.
	if out, err := runLocus(t, "stress", "--cpu", "1", "--cpu-load", "10", "--memory", "1Mi",
		"--duration", "100ms"); err != nil || !strings.Contains(out, "1 burner thread(s)") {
		t.Errorf("stress --cpu 1 --cpu-load 10: %v\n%s", err, out)
	}
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "8.0 MiB resident") ||
		!strings.Contains(out, "1 burner thread(s)") {
		t.Errorf("summary %q: want one line with 8.0 MiB and one burner", out)
	}
}

func TestStressRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--cpu", "-1"}, {"--cpu", "lots"}, {"--cpu-load", "150"}, {"--memory", "-8Mi"}, {"--duration", "-1s"},
		{"--touch-interval", "0s"}, {"extra"}, {"--peaks", "2", "--mem-bw", "1"},
	} {
		_, err := runLocus(t, append([]string{"stress"}, args...)...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("stress %v: err %v, want a usage error (exit 2)", args, err)
		}
	}
	// Memory-bandwidth flags out of bounds: refused before anything is
	// allocated, naming the flag and the value.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mem-bw", "-1"}, "--mem-bw -1"},
		{[]string{"--mem-bw", "100000"}, "--mem-bw 100000"},
		{[]string{"--mem-bw", "1", "--mem-bw-size", "64Ti"}, "--mem-bw-size 64.0 TiB"},
		{[]string{"--mem-bw", "1", "--mem-bw-size", "4Ki"}, "--mem-bw-size 4.0 KiB"},
		{[]string{"--mem-bw", "1", "--mem-bw-size", "lots"}, `--mem-bw-size "lots"`},
	} {
		_, err := runLocus(t, append([]string{"stress"}, tc.args...)...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("stress %v: err %v, want a usage error naming %s", tc.args, err, tc.want)
		}
	}
}

func TestStressMemBW(t *testing.T) {
	out, err := runLocus(t, "stress", "--mem-bw", "1", "--mem-bw-size", "4Mi", "--duration", "100ms")
	if err != nil || !strings.Contains(out, "1 memory-bandwidth worker(s) over 4.0 MiB") {
		t.Fatalf("stress --mem-bw 1: %v\n%s", err, out)
	}
}
