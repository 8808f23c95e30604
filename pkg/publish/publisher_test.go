package publish

import (
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/status"
)

// Forget writes the status without the workloads named, leaves /status as
// it was, and writes nothing before a status was published.
func TestForget(t *testing.T) {
	dir := t.TempDir()
	p := NewPublisher(dir, NewMetrics("", ""))
	if err := p.Forget([]string{"demo"}); err != nil {
		t.Fatal(err)
	}
	if _, err := status.Read(dir); err == nil {
		t.Fatal("status written before any was published")
	}
	st := status.Status{Time: time.Unix(1, 0).UTC(), Workloads: []status.WorkloadStatus{{Name: "demo"}, {Name: "db"}}}
	if err := p.Publish(st); err != nil {
		t.Fatal(err)
	}
	if err := p.Forget([]string{"demo"}); err != nil {
		t.Fatal(err)
	}
	got, err := status.Read(dir)
	if err != nil || len(got.Workloads) != 1 || got.Workloads[0].Name != "db" {
		t.Fatalf("status.json %+v, %v; want db only", got.Workloads, err)
	}
	if len(p.Current().Workloads) != 2 {
		t.Fatalf("/status changed: %+v", p.Current().Workloads)
	}
}
