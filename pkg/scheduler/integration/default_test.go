package integration

import (
	"context"
	"testing"

	"github.com/locus-project/locus/pkg/scheduler/plugin"
)

// Without --config, locus-scheduler replaces kube-scheduler as it is: the
// default profile, as default-scheduler, with the plugin added.
func TestDefaultConfiguration(t *testing.T) {
	c := newCluster(t, 1, false)
	node := c.names()[0]
	publish(t, node, machine, nil)
	s, err := plugin.Start(context.Background(), "", "--kubeconfig="+cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	if len(s.Plugins()) != 1 {
		t.Fatalf("%d plugin instances, want 1", len(s.Plugins()))
	}
	createPod(t, c.ns, "p", "1", "4", nil)
	p := waitScheduled(t, c.ns, []string{"p"})
	checkPlacements(t, p)
}
