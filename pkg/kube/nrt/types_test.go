package nrt

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/locus-project/locus/pkg/quantity"
)

// A report is another node's text: a quantity apimachinery would parse
// for good is refused, naming the resource and field, whether the report
// arrives as JSON or as the dynamic informer's nested maps.
func TestResourceQuantitiesBounded(t *testing.T) {
	for _, tc := range []struct{ capacity, err string }{
		{`"96"`, ""},
		{`96`, ""},
		{`"1e-99999999999"`, `resource "cpu": capacity: "1e-99999999999" has an exponent beyond ±308`},
		{`"e122222222111"`, `resource "cpu": capacity: "e122222222111" has an exponent beyond`},
		{`"` + strings.Repeat("9", 80) + `"`, `resource "cpu": capacity: "9999999999999999999... is 82 bytes, more than a quantity's 64`},
		{`"12 apples"`, `resource "cpu": capacity: "12 apples": quantities must match`},
	} {
		raw := `{"zones":[{"name":"node-0","type":"Node","resources":[{"name":"cpu","capacity":` + tc.capacity + `,"allocatable":"90","available":"90"}]}]}`
		var o Object
		err := json.Unmarshal([]byte(raw), &o)
		var m map[string]any
		if jerr := json.Unmarshal([]byte(raw), &m); jerr != nil {
			t.Fatal(jerr)
		}
		var fromMaps Object
		merr := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &fromMaps)
		for _, got := range []error{err, merr} {
			if tc.err == "" && got != nil || tc.err != "" && (got == nil || !strings.Contains(got.Error(), tc.err)) {
				t.Errorf("capacity %s: %v, want %q", tc.capacity, got, tc.err)
			}
		}
		if tc.err == "" {
			r := o.Zones[0].Resources[0]
			if r.Name != "cpu" || r.Capacity.Value() != 96 || r.Available.Value() != 90 || fromMaps.Zones[0].Resources[0].Capacity.Value() != 96 {
				t.Errorf("capacity %s read as %+v", tc.capacity, r)
			}
		}
	}
}

// Whatever a report's resource says, it is read or refused at once.
func FuzzResourceJSON(f *testing.F) {
	for _, s := range []string{`"96"`, `96`, `"1e-99999999999"`, `"e122222222111"`, `"1Gi"`, `null`, `"\u0031Gi"`, `[1]`, `{"a":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, capacity string) {
		var r Resource
		start := time.Now()
		err := json.Unmarshal([]byte(`{"name":"cpu","capacity":`+capacity+`}`), &r)
		if d := time.Since(start); d > time.Second {
			t.Fatalf("%q took %v", capacity, d)
		}
		if err == nil && !quantity.Bounded(&r.Capacity) {
			t.Fatalf("%q read as %v, out of bounds", capacity, r.Capacity)
		}
	})
}
