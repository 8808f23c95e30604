package quantity

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestBounded(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"0", true}, {"1Gi", true}, {"1536Mi", true}, {"-2Mi", true}, {"0.5", true},
		{"1e300", true}, {"9Ei", true}, {"1e-1000", true}, // rounded up to 1n as it parses
		{"1e400", false}, {"-1e400", false},
		{"e122222222111", false}, {"1e122222222111", false}, {"0e999", false},
	} {
		q := resource.MustParse(tc.text)
		if got := Bounded(&q); got != tc.want {
			t.Errorf("Bounded(%s) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// What Parse takes, it takes at once, and exact arithmetic reads it at once.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1Gi", "e122222222111", "1e308", "9e307Ki", "0e308", "123456789e-300", "0.000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		start := time.Now()
		q, err := Parse(text)
		if err != nil {
			return
		}
		q.Cmp(resource.MustParse("1Pi"))
		q.CmpInt64(1 << 50)
		q.Value()
		q.MilliValue()
		q.AsInt64()
		_ = q.String()
		if d := time.Since(start); d > time.Second {
			t.Fatalf("%q took %v to parse and read", text, d)
		}
	})
}

func TestParse(t *testing.T) {
	for _, tc := range []struct{ text, err string }{
		{"1Gi", ""}, {"1E", ""}, {"2Ei", ""}, {"1e308", ""}, {"1e-308", ""}, {"5e+3", ""}, {"0.5", ""},
		{"1e309", "exponent beyond"}, {"1e-99999999999", "exponent beyond"}, {"e122222222111", "exponent beyond"},
		{"1E0000000000000000000000000000000000000000000400", "exponent beyond"},
		{"1" + string(make([]byte, 70)), "more than a quantity's 64"},
		{"1Gb", "must match"},
	} {
		_, err := Parse(tc.text)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Parse(%q): %v, want %q", tc.text, err, tc.err)
		}
	}
	for _, tc := range []struct {
		json string
		want string
	}{{`"1Gi"`, "1Gi"}, {`2`, "2"}, {` "500m" `, "500m"}, {`null`, ""}} {
		q, err := FromJSON([]byte(tc.json))
		if err != nil || (q == nil) != (tc.want == "") || q != nil && q.String() != tc.want {
			t.Errorf("FromJSON(%s) = %v, %v, want %s", tc.json, q, err, tc.want)
		}
	}
	if _, err := FromJSON([]byte(`"1e-99999999999"`)); err == nil {
		t.Error("FromJSON took an exponent beyond the bound")
	}
}

func TestFromJSONEscapes(t *testing.T) {
	q, err := FromJSON([]byte(`"1\u0047i"`))
	if err != nil || q.String() != "1Gi" {
		t.Fatalf("got %v, %v, want 1Gi", q, err)
	}
	if _, err := FromJSON([]byte(`"1Gi`)); err == nil {
		t.Fatal("took an unterminated string")
	}
}
