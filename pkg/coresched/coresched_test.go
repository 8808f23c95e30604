package coresched

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pids    []int
		cookies map[int]uint64
		create  bool
		share   []int
	}{
		{"none", nil, nil, false, nil},
		{"fresh workload", []int{10, 11, 12}, map[int]uint64{}, true, []int{11, 12}},
		{"already shared", []int{10, 11}, map[int]uint64{10: 7, 11: 7}, false, nil},
		{"a newcomer", []int{10, 11, 12}, map[int]uint64{10: 7, 11: 7}, false, []int{12}},
		{"a stranger's cookie", []int{10, 11}, map[int]uint64{10: 7, 11: 9}, false, []int{11}},
		{"first lost its cookie", []int{10, 11}, map[int]uint64{11: 7}, true, []int{11}},
	} {
		create, share := Plan(tc.pids, tc.cookies)
		if create != tc.create || !slices.Equal(share, tc.share) {
			t.Errorf("%s: create %v share %v; want %v %v", tc.name, create, share, tc.create, tc.share)
		}
	}
}

// TestThisKernel exercises what this kernel allows: where core scheduling
// is available, two processes get one cookie of their own and lose it
// again; where it is not, every call says so with ErrUnavailable and the
// reason, and nothing is changed.
func TestThisKernel(t *testing.T) {
	s := Probe()
	t.Logf("core scheduling: %s", s.Reason)
	var procs []*exec.Cmd
	for range 2 {
		c := exec.Command("sleep", "30")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, c)
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	}
	pids := []int{procs[0].Process.Pid, procs[1].Process.Pid}
	if !s.Available {
		if !strings.HasPrefix(s.Reason, "unavailable: ") {
			t.Fatalf("reason %q", s.Reason)
		}
		if err := Isolate(pids); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Isolate without core scheduling: %v, want ErrUnavailable", err)
		}
		if _, err := Cookie(pids[0]); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Cookie without core scheduling: %v", err)
		}
		return
	}
	if err := Isolate(pids); err != nil {
		t.Fatal(err)
	}
	a, errA := Cookie(pids[0])
	b, errB := Cookie(pids[1])
	own, errC := Cookie(0)
	if errors.Join(errA, errB, errC) != nil || a == 0 || a != b || own == a {
		t.Fatalf("cookies %d %d (own %d): %v", a, b, own, errors.Join(errA, errB, errC))
	}
	if err := Isolate(pids); err != nil { // again: nothing to change
		t.Fatal(err)
	}
	if err := Clear(pids); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if c, err := Cookie(p); err != nil || c != 0 {
			t.Errorf("pid %d after Clear: cookie %d, %v", p, c, err)
		}
	}
}
