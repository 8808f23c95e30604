package core

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// TestHostileNRT: a report from a compromised node makes that node
// unusable, quickly and with the field named, and leaves the scheduler
// serving the others. Before the bound, the first report hung SetNRT.
func TestHostileNRT(t *testing.T) {
	good := publish(t, twoNode, "good", reservedCore, nil)
	bad := func(edit func(ct *nrt.CPUTopology, o *nrt.Object)) *nrt.Object {
		o := publish(t, twoNode, "bad", reservedCore, nil)
		ct, err := nrt.ReadCPUTopology(o.Metadata.Annotations[nrt.AnnotationCPUTopology])
		if err != nil {
			t.Fatal(err)
		}
		edit(&ct, o)
		o.Metadata.Annotations[nrt.AnnotationCPUTopology] = mustJSON(t, ct)
		return o
	}
	manyZones := func(ct *nrt.CPUTopology, o *nrt.Object) {
		for i := range 5000 {
			o.Zones = append(o.Zones, nrt.Zone{Name: fmt.Sprintf("node-%d", i+2), Type: nrt.ZoneType})
		}
	}
	for name, tc := range map[string]struct {
		obj  *nrt.Object
		want string
	}{
		"reserved":  {bad(func(ct *nrt.CPUTopology, _ *nrt.Object) { ct.Reserved = "0-9223372036854775807" }), "reserved: invalid cpu list"},
		"exclusive": {bad(func(ct *nrt.CPUTopology, _ *nrt.Object) { ct.Exclusive = map[string]string{"ns/p": "0-16000000"} }), `exclusive["ns/p"]`},
		"burst": {bad(func(ct *nrt.CPUTopology, _ *nrt.Object) {
			ct.StaticBurst = map[string]nrt.Burst{"ns/p": {CPUs: "0-4000000"}}
		}), `staticBurst["ns/p"].cpus`},
		"burst request": {bad(func(ct *nrt.CPUTopology, _ *nrt.Object) {
			ct.StaticBurst = map[string]nrt.Burst{"ns/p": {CPUs: "2-3", RequestMilli: -500}}
		}), `staticBurst["ns/p"].requestMilli: -500 is outside`},
		"isolated": {bad(func(ct *nrt.CPUTopology, _ *nrt.Object) { ct.Isolated = "0-99999999" }), "isolated: invalid cpu list"},
		"kubelet":  {bad(func(ct *nrt.CPUTopology, _ *nrt.Object) { ct.Kubelet = "0-99999999" }), "kubelet: invalid cpu list"},
		"cpu id":   {bad(func(ct *nrt.CPUTopology, _ *nrt.Object) { ct.CPUs[len(ct.CPUs)-1].ID = 1 << 40 }), "an id out of range"},
		"zones":    {bad(manyZones), "zones: 5002, more than 1024"},
	} {
		t.Run(name, func(t *testing.T) {
			c := NewCluster()
			c.SetNRT("good", good)
			start := time.Now()
			c.SetNRT("bad", tc.obj)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("SetNRT took %v", d)
			}
			v := c.Snapshot()
			if v.Get("bad").Err == nil || !strings.Contains(v.Get("bad").Err.Error(), tc.want) {
				t.Errorf("bad node: err = %v, want one containing %q", v.Get("bad").Err, tc.want)
			}
			if v.Get("good").Err != nil {
				t.Errorf("good node: %v", v.Get("good").Err)
			}
		})
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// The containers' parts of container-scope pods are the node's to show, not
// the scheduler's to read: a malformed or oversized containers key neither
// makes the report unreadable nor costs the scheduler an allocation per
// entry, and it changes neither the machine nor the holdings.
func TestNRTContainersSkipped(t *testing.T) {
	held := map[string]workload.Assignment{"ns/a": {CPUs: cpuset.New(2, 3), Policy: cpualloc.FullPCPUs}}
	plain := publish(t, twoNode, "n", reservedCore, held)
	_, wantKey, want, err := readNRT(plain)
	if err != nil {
		t.Fatal(err)
	}
	withContainers := func(value string) *nrt.Object {
		raw := plain.Metadata.Annotations[nrt.AnnotationCPUTopology]
		o := *plain
		o.Metadata.Annotations = map[string]string{nrt.AnnotationCPUTopology: raw[:len(raw)-1] + `,"containers":` + value + `}`}
		return &o
	}
	var huge strings.Builder
	huge.WriteString(`{`)
	for i := range 50000 {
		fmt.Fprintf(&huge, `"ns/p%d":{"a":"0-99999999","b":"x"},`, i)
	}
	huge.WriteString(`"ns/a":{"web":"2-3"}}`)
	for name, value := range map[string]string{
		"parts":     `{"ns/a":{"log":"2","web":"3"}}`,
		"not a map": `5`,
		"bad lists": `{"ns/a":{"web":"0-9223372036854775807"}}`,
		"huge":      huge.String(),
	} {
		t.Run(name, func(t *testing.T) {
			o := withContainers(value)
			_, key, r, err := readNRT(o)
			if err != nil {
				t.Fatalf("readNRT: %v", err)
			}
			if key != wantKey || !reflect.DeepEqual(r.holdings, want.holdings) || !r.reserved.Equals(want.reserved) {
				t.Errorf("read %v (reserved %s), want %v (reserved %s); same machine %v", r.holdings, r.reserved, want.holdings, want.reserved, key == wantKey)
			}
			if raceEnabled {
				return
			}
			base := testing.AllocsPerRun(5, func() { _, _, _, _ = readNRT(plain) })
			got := testing.AllocsPerRun(5, func() { _, _, _, _ = readNRT(o) })
			if got > base+2 {
				t.Errorf("readNRT made %.0f allocations, %.0f without the containers key", got, base)
			}
		})
	}
}
