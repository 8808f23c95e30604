package locality

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

func TestEventSeedMessages(t *testing.T) {
	tests := []struct {
		name    string
		pod     PodOutcome
		reason  string
		message string
	}{
		{
			name: "seed output 1",
			pod: PodOutcome{Containers: []ContainerOutcome{
				{Name: "<container-name-1>", Status: ContainerCompleted, From: []int{1}, To: []int{0}, LocalPages: 900},
				{Name: "<container-name-2>", Status: ContainerCompleted, From: []int{0}, To: []int{1}, LocalPages: 100},
			}},
			reason: "MemoryLocalityCompleted",
			message: "Container <container-name-1> completed: migrated memory from remote numa: 1 to local numa: 0\n" +
				"Container <container-name-2> completed: migrated memory from remote numa: 0 to local numa: 1\n" +
				"Total: 2 container(s) completed, 0 failed, 0 skipped; cur local memory ratio 100, rest remote memory pages 0",
		},
		{
			name: "seed output 2",
			pod: PodOutcome{Containers: []ContainerOutcome{
				{Name: "<container-name-1>", Status: ContainerCompleted, From: []int{1}, To: []int{0}, LocalPages: 10},
				{Name: "<container-name-2>", Status: ContainerCompleted, From: []int{0}, To: []int{1},
					Failures: []ProcessFailure{{PID: 111111, Err: Strerror(syscall.ESRCH)}}},
			}},
			reason: "MemoryLocalityCompleted",
			message: "Container <container-name-1> completed: migrated memory from remote numa: 1 to local numa: 0\n" +
				"Container <container-name-2> completed: failed to migrate the following processes: failed pid: 111111, error: No such process,from remote numa: 0 to local numa: 1\n" +
				"Total: 2 container(s) completed, 0 failed, 0 skipped; cur local memory ratio 100, rest remote memory pages 0",
		},
		{
			name:    "seed output 3",
			pod:     PodOutcome{Containers: []ContainerOutcome{{Name: "redis", Status: ContainerSkipped, Reason: ReasonNoTargetNUMA}}},
			reason:  "MemoryLocalitySkipped",
			message: "no target numa",
		},
		{
			name:    "seed output 4: unexpected error",
			pod:     PodOutcome{Err: errors.New("read cgroup kubepods/pod1/c1: permission denied")},
			reason:  "MemoryLocalityFailed",
			message: "read cgroup kubepods/pod1/c1: permission denied",
		},
		{
			name: "partial move, one skipped, ratio rounds down",
			pod: PodOutcome{Containers: []ContainerOutcome{
				{Name: "a", Status: ContainerCompleted, From: []int{2, 3}, To: []int{0, 1}, Stopped: []int{1}, LocalPages: 980, RemotePages: 20},
				{Name: "b", Status: ContainerSkipped, Reason: ReasonNoTargetNUMA},
			}},
			reason: "MemoryLocalityCompleted",
			message: "Container a completed: migrated memory from remote numa: 2,3 to local numa: 0,1, stopped at the free-memory margin on local numa: 1\n" +
				"Total: 1 container(s) completed, 0 failed, 1 skipped; cur local memory ratio 98, rest remote memory pages 20",
		},
		{
			name: "nothing remote, two failures",
			pod: PodOutcome{Containers: []ContainerOutcome{
				{Name: "a", Status: ContainerCompleted, To: []int{0}, LocalPages: 5},
				{Name: "b", Status: ContainerCompleted, From: []int{1}, To: []int{0},
					Failures: []ProcessFailure{{PID: 1, Err: "No such process"}, {PID: 2, Err: "Permission denied"}}, RemotePages: 5},
			}},
			reason: "MemoryLocalityCompleted",
			message: "Container a completed: no remote memory to migrate to local numa: 0\n" +
				"Container b completed: failed to migrate the following processes: failed pid: 1, error: No such process; failed pid: 2, error: Permission denied,from remote numa: 1 to local numa: 0\n" +
				"Total: 2 container(s) completed, 0 failed, 0 skipped; cur local memory ratio 50, rest remote memory pages 5",
		},
		{
			name: "every container failed",
			pod: PodOutcome{Containers: []ContainerOutcome{
				{Name: "a", Status: ContainerFailed, Reason: "cgroup kubepods/x does not exist"},
			}},
			reason: "MemoryLocalityFailed",
			message: "Container a failed: cgroup kubepods/x does not exist\n" +
				"Total: 0 container(s) completed, 1 failed, 0 skipped; cur local memory ratio 100, rest remote memory pages 0",
		},
		{
			name: "seed Redis walk-through: one container, MemoryLocalitySuccess in one line",
			pod: PodOutcome{Containers: []ContainerOutcome{
				{Name: "redis", Status: ContainerCompleted, From: []int{0}, To: []int{1}, LocalPages: 1400714, RemotePages: 28586},
			}},
			reason:  "MemoryLocalitySuccess",
			message: "migrated memory from remote numa: 0 to local numa: 1, cur local memory ratio 98, rest remote memory pages 28586",
		},
		{
			name:    "one container already local: Success, no empty node list",
			pod:     PodOutcome{Containers: []ContainerOutcome{{Name: "redis", Status: ContainerCompleted, To: []int{0}, LocalPages: 10}}},
			reason:  "MemoryLocalitySuccess",
			message: "no remote memory to migrate to local numa: 0, cur local memory ratio 100, rest remote memory pages 0",
		},
		{
			name: "one container with a failed process: the per-container form, no empty node list",
			pod: PodOutcome{Containers: []ContainerOutcome{{Name: "redis", Status: ContainerCompleted, To: []int{0},
				Failures: []ProcessFailure{{PID: 7, Err: "No such process"}}, LocalPages: 10}}},
			reason: "MemoryLocalityCompleted",
			message: "Container redis completed: failed to migrate the following processes: failed pid: 7, error: No such process,no remote memory to migrate to local numa: 0\n" +
				"Total: 1 container(s) completed, 0 failed, 0 skipped; cur local memory ratio 100, rest remote memory pages 0",
		},
		{
			name:    "no containers",
			pod:     PodOutcome{},
			reason:  "MemoryLocalitySkipped",
			message: "no target numa",
		},
	}
	for _, tc := range tests {
		reason, message := tc.pod.Event()
		if reason != tc.reason || message != tc.message {
			t.Errorf("%s:\n got %s %q\nwant %s %q", tc.name, reason, message, tc.reason, tc.message)
		}
		if strings.Contains(message, "numa:  ") || strings.Contains(message, "numa: ,") || strings.HasSuffix(message, "numa: ") {
			t.Errorf("%s: an empty node list in %q", tc.name, message)
		}
	}
}

func TestStrerror(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{syscall.ESRCH, "No such process"},
		{syscall.ENOMEM, "Cannot allocate memory"},
		{syscall.EBUSY, "Device or resource busy"},
		{errors.New("custom"), "custom"},
		{nil, ""},
	}
	for _, tc := range tests {
		if got := Strerror(tc.err); got != tc.want {
			t.Errorf("Strerror(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestShouldReport(t *testing.T) {
	base := Report{Reason: EventCompleted, Lines: []string{"Container a completed: migrated memory from remote numa: 1 to local numa: 0"}, Completed: 1, LocalRatio: 90}
	with := func(f func(*Report)) Report {
		r := base
		r.Lines = append([]string{}, base.Lines...)
		f(&r)
		return r
	}
	tests := []struct {
		name string
		prev Report
		cur  Report
		want bool
	}{
		{"first run", Report{}, base, true},
		{"same", base, base, false},
		{"ratio +10 is not enough", base, with(func(r *Report) { r.LocalRatio = 100 }), false},
		{"ratio -10 is not enough", base, with(func(r *Report) { r.LocalRatio = 80 }), false},
		{"ratio -11", base, with(func(r *Report) { r.LocalRatio = 79 }), true},
		{"ratio +11", with(func(r *Report) { r.LocalRatio = 50 }), with(func(r *Report) { r.LocalRatio = 61 }), true},
		{"reason changed", base, with(func(r *Report) { r.Reason = EventSkipped }), true},
		{"line changed", base, with(func(r *Report) { r.Lines[0] = "Container a completed: no remote memory to migrate to local numa: 0" }), true},
		{"counts changed", base, with(func(r *Report) { r.Completed, r.Failed = 0, 1 }), true},
	}
	for _, tc := range tests {
		if got := ShouldReport(tc.prev, tc.cur); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// Report() leaves the Total line out, so a small ratio drift alone
	// does not count as a change.
	pod := func(remote uint64) PodOutcome {
		return PodOutcome{Containers: []ContainerOutcome{{Name: "a", Status: ContainerCompleted, From: []int{1}, To: []int{0}, LocalPages: 100 - remote, RemotePages: remote}}}
	}
	if ShouldReport(pod(2).Report(), pod(9).Report()) {
		t.Error("98 -> 91: reported, want quiet")
	}
	if !ShouldReport(pod(2).Report(), pod(30).Report()) {
		t.Error("98 -> 70: quiet, want reported")
	}
}

func TestResultOutcome(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		line string
	}{
		{
			name: "moved",
			r: Result{Local: []int{0}, Before: NodePages{0: 10, 1: 90}, After: NodePages{0: 100}, Processes: []ProcessResult{
				{PID: 5, Moved: []Move{{From: 1, To: 0, Pages: 90}}}}},
			line: "Container c completed: migrated memory from remote numa: 1 to local numa: 0",
		},
		{
			name: "a process exited",
			r: Result{Local: []int{1}, Before: NodePages{0: 10}, After: NodePages{1: 5}, Processes: []ProcessResult{
				{PID: 111111, Err: "No such process"}, {PID: 7, Moved: []Move{{From: 0, To: 1, Pages: 5}}}}},
			line: "Container c completed: failed to migrate the following processes: failed pid: 111111, error: No such process,from remote numa: 0 to local numa: 1",
		},
		{
			name: "stopped at margin",
			r: Result{Local: []int{0, 1}, Before: NodePages{2: 10}, After: NodePages{0: 4, 2: 6}, RemoteLeft: 6, Stopped: []int{0, 1},
				Processes: []ProcessResult{{PID: 1, Moved: []Move{{From: 2, To: 0, Pages: 4}}}}},
			line: "Container c completed: migrated memory from remote numa: 2 to local numa: 0, stopped at the free-memory margin on local numa: 0,1",
		},
		{
			name: "skipped",
			r:    Result{Local: []int{0, 1}, Skipped: ReasonNoTargetNUMA},
			line: "Container c skipped: no target numa",
		},
	}
	for _, tc := range tests {
		if got := tc.r.Outcome("c").Line(); got != tc.line {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.line)
		}
	}
	if got := FailedOutcome("c", syscall.EACCES).Line(); got != "Container c failed: Permission denied" {
		t.Errorf("failed outcome: %q", got)
	}
}
