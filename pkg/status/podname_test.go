package status

import "testing"

func TestPodOf(t *testing.T) {
	for _, tc := range []struct{ name, ns, pod string }{
		{"team-a/redis-0", "team-a", "redis-0"},
		{"redis", "", ""}, // a host workload
		{"", "", ""},
	} {
		if ns, pod := PodOf(tc.name); ns != tc.ns || pod != tc.pod {
			t.Errorf("PodOf(%q) = %q, %q; want %q, %q", tc.name, ns, pod, tc.ns, tc.pod)
		}
	}
}
