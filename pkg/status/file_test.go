package status

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func sample(at time.Time) Status {
	return Status{Time: at, Config: "kubernetes node n1 <&>", ConfigError: `bad "x"`,
		Node: NodeStatus{CgroupVersion: "v2", CPUs: "0-191", Shared: "1-95,97-191", Problems: []string{"a < b"}},
		Workloads: []WorkloadStatus{{Name: "ns/web", Pool: "shared", CPUs: "1-95,97-191", NUMANodes: []int{0, 1}},
			{Name: "ns/db", Pool: "exclusive", CPUs: "2-3"}}}
}

// The encoder's bytes are json.Marshal's and a newline, whatever the time
// (its zone and nanoseconds included); a status differing from the one
// saved only in its time is not encoded again, any other difference is.
func TestEncoderIsMarshalAndSkipsTheSame(t *testing.T) {
	var e Encoder
	zone := time.FixedZone("x", 5*3600+1800)
	for i, at := range []time.Time{time.Unix(1700000000, 123456789).In(zone), time.Unix(0, 0).UTC(), {}} {
		st := sample(at)
		st.Workloads[0].CPUs += string(rune('a' + i)) // a change each time
		raw, changed, err := e.Encode(st)
		if err != nil || !changed {
			t.Fatalf("%v: changed %v, %v", at, changed, err)
		}
		want, _ := json.Marshal(st)
		if !bytes.Equal(raw, append(want, '\n')) {
			t.Errorf("%v:\n%s\nwant json.Marshal's\n%s", at, raw, want)
		}
		if raw, changed, _ := e.Encode(st); !changed || raw == nil {
			t.Errorf("%v: not saved yet, but told unchanged", at)
		}
		e.Saved()
		st.Time = at.Add(time.Hour)
		if raw, changed, err := e.Encode(st); changed || raw != nil || err != nil {
			t.Errorf("%v: only the time changed, yet changed %v (%s), %v", at, changed, raw, err)
		}
	}
}

// status.json is one compact line that Read turns back into the status.
func TestWriteIsCompactAndReadBack(t *testing.T) {
	dir := t.TempDir()
	st := sample(time.Unix(1700000000, 5).UTC())
	if err := Write(dir, st); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(raw, []byte("\n")); n != 1 || bytes.Contains(raw, []byte(": ")) {
		t.Errorf("status.json not one compact line (%d newlines):\n%s", n, raw)
	}
	got, err := Read(dir)
	if err != nil || !reflect.DeepEqual(got, st) {
		t.Errorf("read back %+v, %v; want %+v", got, err, st)
	}
}
