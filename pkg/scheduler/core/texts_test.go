package core

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// A report read through the texts read before is read as it is alone:
// nodes that hold nothing (one text for all), nodes that hold pods (their
// own text, the machine's CPU list), another machine, one malformed;
// each read twice, so the second finds the first's text. Nodes of one
// machine share its fingerprint, two machines do not.
func TestReportTextsReadAsAlone(t *testing.T) {
	held := map[string]workload.Assignment{"ns/a": {CPUs: cpuset.New(2, 3), Policy: cpualloc.FullPCPUs}}
	bad := publish(t, twoNode, "bad", reservedCore, nil)
	bad.Metadata.Annotations = map[string]string{nrt.AnnotationCPUTopology: `{"cpus":[{"id":"x"}]}`}
	objs := []*nrt.Object{
		publish(t, twoNode, "idle0", reservedCore, nil),
		publish(t, twoNode, "idle1", reservedCore, nil),
		publish(t, twoNode, "busy", reservedCore, held),
		publish(t, splitL3, "other", cpuset.New(), nil),
		bad,
	}
	var texts reportTexts
	keys := map[string]string{}
	for round := range 2 {
		for _, o := range objs {
			name := o.Metadata.Name
			_, wantKey, want, wantErr := readNRT(o)
			build, key, got, err := readNRTWith(o, &texts)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("round %d, %s: error %v, alone %v", round, name, err, wantErr)
			}
			if err != nil {
				continue
			}
			if key != wantKey || !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, %s: read as %+v (key %.40q), alone %+v (key %.40q)", round, name, got, key, want, wantKey)
			}
			topo, err := build()
			if err != nil || len(topo.CPUs) == 0 {
				t.Fatalf("round %d, %s: machine %v, %v", round, name, topo, err)
			}
			keys[name] = key
		}
	}
	if keys["idle0"] != keys["busy"] || keys["idle0"] == keys["other"] {
		t.Errorf("fingerprints: idle0 and busy (one machine) same %t, idle0 and other (two) same %t",
			keys["idle0"] == keys["busy"], keys["idle0"] == keys["other"])
	}
	if len(texts.idle) != 2 {
		t.Errorf("%d annotations kept, want 2 (the two machines' idle nodes; not the busy node's)", len(texts.idle))
	}
}

// However many kinds of machine the reports describe, and however long
// their texts, the texts kept stay few and short.
func TestReportTextsBounded(t *testing.T) {
	var texts reportTexts
	for i := range 3 * textsKept {
		cpus := fmt.Sprintf(`[{"id":%d,"numa":0,"l3":-1}]`, i)
		if _, _, err := texts.read(`{"cpus":` + cpus + `,"reserved":"","isolated":""}`); err != nil {
			t.Fatal(err)
		}
		if len(texts.lists) > textsKept || len(texts.idle) > textsKept {
			t.Fatalf("after %d kinds of machine: %d lists and %d annotations kept, want at most %d", i+1, len(texts.lists), len(texts.idle), textsKept)
		}
	}
	texts = reportTexts{}
	long := `{"cpus":[{"id":0,"numa":0,"l3":-1}],"reserved":"","isolated":"","kubelet":"` + fmt.Sprintf("%*s", maxKeptText, "") + `"}`
	if _, _, err := texts.read(long); err != nil {
		t.Fatal(err)
	}
	if len(texts.idle) != 0 {
		t.Errorf("an annotation of %d bytes kept, want none over %d", len(long), maxKeptText)
	}
}
