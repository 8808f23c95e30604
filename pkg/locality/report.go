package locality

import "slices"

// Report is what an Event said, kept to decide whether the next run is worth
// another Event.
type Report struct {
	Reason string
	// Lines are the per-container lines; the Total line is left out because
	// its ratio moves a little on every run.
	Lines                      []string
	Completed, Failed, Skipped int
	LocalRatio                 int
}

// Report condenses the outcome for ShouldReport.
func (p PodOutcome) Report() Report {
	reason, _ := p.Event()
	r := Report{Reason: reason}
	r.Completed, r.Failed, r.Skipped = p.Counts()
	r.LocalRatio, _ = p.LocalRatio()
	if p.Err != nil {
		r.Lines = []string{p.Err.Error()}
	}
	for _, c := range p.Containers {
		r.Lines = append(r.Lines, c.Line())
	}
	return r
}

// ShouldReport says whether a repeated migration records an Event: always
// the first time (prev has no Reason), then only when the result changed
// (reason, a container's line, the counts) or the local memory ratio moved
// by more than 10 percentage points.
func ShouldReport(prev, cur Report) bool {
	if prev.Reason == "" {
		return true
	}
	if prev.Reason != cur.Reason || !slices.Equal(prev.Lines, cur.Lines) ||
		prev.Completed != cur.Completed || prev.Failed != cur.Failed || prev.Skipped != cur.Skipped {
		return true
	}
	d := cur.LocalRatio - prev.LocalRatio
	return d > 10 || d < -10
}
