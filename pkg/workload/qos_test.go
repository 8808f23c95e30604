package workload

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/memqos"
)

func TestClassifyQoS(t *testing.T) {
	tests := []struct {
		name          string
		labels, ann   map[string]string
		kube          memqos.KubeQoS
		status        string
		be            bool
		locality      string
		unlabelledGua bool
	}{
		{"label wins", map[string]string{LabelQoSClass: " be ", LegacyQoSClass: "LS"}, nil, memqos.Guaranteed, "BE", true, "BE", false},
		{"legacy label", map[string]string{LegacyQoSClass: "lsr"}, nil, memqos.BestEffort, "LSR", false, "LSR", false},
		{"legacy annotation", nil, map[string]string{LegacyQoSClass: "BE"}, memqos.Burstable, "BE", true, "BE", false},
		{"unlabelled best effort", nil, nil, memqos.BestEffort, "BestEffort", true, "BE", false},
		{"unlabelled guaranteed", nil, nil, memqos.Guaranteed, "Guaranteed", false, "LS", true},
		{"unlabelled burstable", nil, nil, memqos.Burstable, "Burstable", false, "LS", false},
	}
	for _, tc := range tests {
		q := ClassifyQoS(tc.labels, tc.ann, tc.kube)
		class, ug := q.Locality()
		if q.Status() != tc.status || q.BE() != tc.be || class != tc.locality || ug != tc.unlabelledGua {
			t.Errorf("%s: status %q BE %v locality %q/%v; want %q %v %q/%v", tc.name, q.Status(), q.BE(), class, ug,
				tc.status, tc.be, tc.locality, tc.unlabelledGua)
		}
	}
}

// Every error of the parser names the field and the value it refused.
func TestPolicyOf(t *testing.T) {
	tests := []struct {
		raw, want, err string
	}{
		{"", "", ""},
		{" Static-Burst ", "static-burst", ""},
		{"full-pcpus-then-threads", "full-pcpus-then-threads", ""},
		{"Fastest", "", `annotation cpu-policy: "fastest" is not one of`},
	}
	for _, tc := range tests {
		p, err := PolicyOf(map[string]string{AnnotationCPUPolicy: tc.raw})
		if string(p) != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("PolicyOf(%q) = %q, %v; want %q, %q", tc.raw, p, err, tc.want, tc.err)
		}
	}
}
