package locality

import "slices"

// Outcome turns a container's migration result into its Event line data:
// skipped when the plan was; otherwise completed, naming the remote nodes
// that held memory before and the local nodes that received it (all local
// nodes when nothing moved), with the processes that failed and the nodes
// where the margin stopped the move. A container whose migration could not
// run at all is not a Result: see FailedOutcome.
func (r Result) Outcome(name string) ContainerOutcome {
	c := ContainerOutcome{Name: name, LocalPages: r.After.On(r.Local), RemotePages: r.RemoteLeft}
	if r.Skipped != "" {
		c.Status, c.Reason = ContainerSkipped, r.Skipped
		return c
	}
	c.Status = ContainerCompleted
	c.From = r.Before.RemoteNodes(r.Local)
	for _, p := range r.Processes {
		for _, m := range p.Moved {
			if !slices.Contains(c.To, m.To) {
				c.To = append(c.To, m.To)
			}
		}
	}
	slices.Sort(c.To)
	if len(c.To) == 0 {
		c.To = slices.Clone(r.Local)
	}
	c.Failures = r.Failures()
	c.Stopped = slices.Clone(r.Stopped)
	return c
}

// FailedOutcome is a container whose migration could not run.
func FailedOutcome(name string, err error) ContainerOutcome {
	return ContainerOutcome{Name: name, Status: ContainerFailed, Reason: Strerror(err)}
}
