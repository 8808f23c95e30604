package locality

import (
	"fmt"
	"slices"
	"strings"
)

// Event reasons, as users already filter on them.
const (
	EventCompleted = "MemoryLocalityCompleted"
	EventSkipped   = "MemoryLocalitySkipped"
	EventFailed    = "MemoryLocalityFailed"
	// EventSuccess is the seed's single-container form (its Redis
	// walk-through): one line with the ratio, no Total.
	EventSuccess = "MemoryLocalitySuccess"
)

// ContainerStatus is how one container's migration ended.
type ContainerStatus string

const (
	ContainerCompleted ContainerStatus = "completed"
	ContainerFailed    ContainerStatus = "failed"
	ContainerSkipped   ContainerStatus = "skipped"
)

// ProcessFailure is a process whose memory could not be moved.
type ProcessFailure struct {
	PID int
	Err string // as strerror(3) words it: "No such process"
}

// ContainerOutcome is one container's result as the Event reports it.
type ContainerOutcome struct {
	Name   string
	Status ContainerStatus
	From   []int // remote nodes memory was moved from
	To     []int // local nodes it was moved to
	// Failures are processes that failed while the rest completed.
	Failures []ProcessFailure
	// Stopped lists local nodes where the free-memory margin ended the move.
	Stopped []int
	Reason  string // why the container failed or was skipped
	// LocalPages and RemotePages are the container's memory afterwards.
	LocalPages, RemotePages uint64
}

// Line is the container's line of the Event message.
func (c ContainerOutcome) Line() string {
	switch c.Status {
	case ContainerSkipped:
		return fmt.Sprintf("Container %s skipped: %s", c.Name, c.Reason)
	case ContainerFailed:
		return fmt.Sprintf("Container %s failed: %s", c.Name, c.Reason)
	}
	var line string
	switch {
	case len(c.Failures) > 0:
		fails := make([]string, len(c.Failures))
		for i, f := range c.Failures {
			fails[i] = fmt.Sprintf("failed pid: %d, error: %s", f.PID, f.Err)
		}
		line = fmt.Sprintf("Container %s completed: failed to migrate the following processes: %s,%s",
			c.Name, strings.Join(fails, "; "), c.direction(""))
	default:
		line = fmt.Sprintf("Container %s completed: %s", c.Name, c.direction("migrated memory "))
	}
	return line + c.stopped()
}

// direction says where memory went: verb + "from remote numa: 1 to local
// numa: 0" (the seed writes verb "migrated memory " or, after the failed
// processes, none), or, with no remote node, "no remote memory to migrate to
// local numa: 0", so that an empty list is never printed.
func (c ContainerOutcome) direction(verb string) string {
	to := FormatNodeList(c.To)
	if to == "" {
		to = "none"
	}
	if len(c.From) == 0 {
		return "no remote memory to migrate to local numa: " + to
	}
	return fmt.Sprintf("%sfrom remote numa: %s to local numa: %s", verb, FormatNodeList(c.From), to)
}

func (c ContainerOutcome) stopped() string {
	if len(c.Stopped) == 0 {
		return ""
	}
	return fmt.Sprintf(", stopped at the free-memory margin on local numa: %s", FormatNodeList(c.Stopped))
}

// PodOutcome is the result for all containers of a pod.
type PodOutcome struct {
	Containers []ContainerOutcome
	// Err is an unexpected error that stopped the whole pod.
	Err error
}

// Counts returns how many containers completed, failed and were skipped.
func (p PodOutcome) Counts() (completed, failed, skipped int) {
	for _, c := range p.Containers {
		switch c.Status {
		case ContainerCompleted:
			completed++
		case ContainerFailed:
			failed++
		default:
			skipped++
		}
	}
	return completed, failed, skipped
}

// LocalRatio is the whole percentage of the pod's pages on local nodes
// afterwards (100 with no memory), and RemotePages what is left remote.
func (p PodOutcome) LocalRatio() (ratio int, remote uint64) {
	var local uint64
	for _, c := range p.Containers {
		local += c.LocalPages
		remote += c.RemotePages
	}
	if local+remote == 0 {
		return 100, 0
	}
	return int(local * 100 / (local + remote)), remote
}

// Event returns the reason and message of the pod's Event:
//   - an unexpected error: MemoryLocalityFailed with the error;
//   - every container skipped (or none): MemoryLocalitySkipped with the
//     distinct reasons, normally "no target numa";
//   - a pod of one container that completed with no process failing:
//     MemoryLocalitySuccess, the seed's one-line form
//     "migrated memory from remote numa: 0 to local numa: 1, cur local
//     memory ratio 98, rest remote memory pages 28586";
//   - no container completed but some failed: MemoryLocalityFailed;
//   - otherwise MemoryLocalityCompleted;
//
// the last two with one line per container that was not skipped, then the
// Total line.
func (p PodOutcome) Event() (reason, message string) {
	if p.Err != nil {
		return EventFailed, p.Err.Error()
	}
	completed, failed, skipped := p.Counts()
	if c := p.Containers; len(c) == 1 && completed == 1 && len(c[0].Failures) == 0 {
		ratio, remote := p.LocalRatio()
		return EventSuccess, fmt.Sprintf("%s%s, cur local memory ratio %d, rest remote memory pages %d",
			c[0].direction("migrated memory "), c[0].stopped(), ratio, remote)
	}
	if completed == 0 && failed == 0 {
		var reasons []string
		for _, c := range p.Containers {
			if !slices.Contains(reasons, c.Reason) {
				reasons = append(reasons, c.Reason)
			}
		}
		if len(reasons) == 0 {
			reasons = []string{ReasonNoTargetNUMA}
		}
		return EventSkipped, strings.Join(reasons, "; ")
	}
	var lines []string
	for _, c := range p.Containers {
		if c.Status != ContainerSkipped {
			lines = append(lines, c.Line())
		}
	}
	ratio, remote := p.LocalRatio()
	lines = append(lines, fmt.Sprintf("Total: %d container(s) completed, %d failed, %d skipped; cur local memory ratio %d, rest remote memory pages %d",
		completed, failed, skipped, ratio, remote))
	reason = EventCompleted
	if completed == 0 {
		reason = EventFailed
	}
	return reason, strings.Join(lines, "\n")
}
