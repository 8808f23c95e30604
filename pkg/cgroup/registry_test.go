package cgroup

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		knob  Knob
		value string
		ok    bool
	}{
		{CPUSetCPUs, "0-3,8", true},
		{CPUSetCPUs, "0,1,2", true},
		{CPUSetCPUs, "", false},
		{CPUSetCPUs, "3-1", false},
		{CPUSetCPUs, "a", false},
		{CPUSetMems, "0", true},
		{MemoryMin, "104857600", true},
		{MemoryMin, "max", true},
		{MemoryMin, "-1", false},
		{MemoryMin, "100M", false},
		{MemoryLimit, "max", true},
		{MemoryWmarkRatio, "95", true},
		{MemoryWmarkRatio, "101", false},
		{MemoryWmarkRatio, "-1", false},
		{MemoryWmarkMinAdj, "-25", true},
		{MemoryWmarkMinAdj, "50", true},
		{MemoryWmarkMinAdj, "-26", false},
		{MemoryWmarkMinAdj, "51", false},
		{MemoryWmarkScale, "0", false},
		{CPUQuota, "max", true},
		{CPUQuota, "50000", true},
		{CPUQuota, "999", false}, // the kernel's floor is 1 ms
		{CPUPeriod, "100000", true},
		{CPUPeriod, "999", false},
		{CPUShares, "2", true},
		{CPUShares, "1", false},
		{CPUShares, "262145", false},
	} {
		spec, ok := Lookup(tc.knob)
		if !ok {
			t.Fatalf("%s not declared", tc.knob)
		}
		err := spec.Validate(tc.value)
		if (err == nil) != tc.ok {
			t.Errorf("%s %q: err=%v, want ok=%v", tc.knob, tc.value, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), string(tc.knob)) {
			t.Errorf("error %q does not name the knob", err)
		}
	}
}

func TestEncode(t *testing.T) {
	for _, tc := range []struct {
		knob  Knob
		v     Version
		value string
		want  string
	}{
		{CPUSetCPUs, V1, "3,0,1,2", "0-3"},
		{MemoryLimit, V1, "max", "-1"},
		{MemoryLimit, V2, "max", "max"},
		{MemorySoftLimit, V1, "max", "-1"},
		{MemoryHigh, V1, "max", "max"}, // Anolis v1 memory.high takes "max" like v2
		{MemoryMin, V2, "0104857600", "104857600"},
		{CPUQuota, V1, "max", "-1"},
		{CPUQuota, V2, "max", "max"},
		{CPUQuota, V2, "50000", "50000"},
		{CPUShares, V1, "1024", "1024"},
		{CPUShares, V2, "1024", "39"},
		{CPUShares, V2, "2", "1"},
		{CPUShares, V2, "262144", "10000"},
	} {
		spec, _ := Lookup(tc.knob)
		got, err := spec.Encode(tc.v, tc.value)
		if err != nil || got != tc.want {
			t.Errorf("%s %v Encode(%q) = %q, %v; want %q", tc.knob, tc.v, tc.value, got, err, tc.want)
		}
	}
}

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		knob      Knob
		v         Version
		cur, want string
		equal     bool
	}{
		{CPUSetCPUs, V1, "0-3", "0,1,2,3", true},
		{CPUSetCPUs, V1, "0-3", "0-2", false},
		{CPUSetCPUs, V2, "", "0", false},
		{MemoryLimit, V1, "9223372036854771712", "-1", true},
		{MemoryLimit, V2, "max", "max", true},
		{MemoryMin, V1, "99999744", "100000000", true}, // the kernel keeps whole pages
		{MemoryMin, V1, "99999744", "100004096", false},
		{MemoryHigh, V1, "max", "9223372036854771712", true},
		{MemoryLimit, V1, "0", "1024", true}, // 1K rounds down to 0 pages
		{CPUQuota, V1, "-1", "-1", true},
		{CPUQuota, V2, "max 100000", "max", true},
		{CPUQuota, V2, "50000 100000", "50000", true},
		{CPUQuota, V2, "50000 100000", "max", false},
		{CPUQuota, V2, "50000 100000", "50000 200000", false},
		{CPUQuota, V2, "max 100000", "max 100000", true},
		{CPUShares, V2, "39", "39", true},
		{MemoryWmarkMinAdj, V1, "-25", "-25", true},
	} {
		spec, _ := Lookup(tc.knob)
		if got := spec.Equal(tc.v, tc.cur, tc.want); got != tc.equal {
			t.Errorf("%s %v Equal(%q, %q) = %v", tc.knob, tc.v, tc.cur, tc.want, got)
		}
	}
}

func TestRegistryShape(t *testing.T) {
	for _, k := range Knobs() {
		s, _ := Lookup(k)
		if s.V1 == nil && s.V2 == nil {
			t.Errorf("%s has no file on any version", k)
		}
		if s.V1 != nil && s.V1.Controller == "" {
			t.Errorf("%s: v1 placement lacks a controller", k)
		}
		if s.V2 != nil && s.V2.Controller != "" {
			t.Errorf("%s: v2 placement names a controller", k)
		}
	}
	// Extensions exactly as the kernels ship them.
	ext := func(k Knob, v Version) bool { s, _ := Lookup(k); p := s.Placement(v); return p != nil && p.Extension }
	for _, k := range []Knob{MemoryMin, MemoryLow, MemoryHigh} {
		if !ext(k, V1) || ext(k, V2) {
			t.Errorf("%s: want an extension on v1 only", k)
		}
	}
	for _, k := range []Knob{MemoryWmarkRatio, MemoryWmarkHigh, MemoryWmarkMinAdj} {
		if !ext(k, V1) || !ext(k, V2) {
			t.Errorf("%s: want an extension on both versions", k)
		}
	}
	if s, _ := Lookup(MemoryWmarkHigh); !s.ReadOnly {
		t.Error("memory.wmark_high is computed by the kernel and must be read-only")
	}
}

func TestVerbatim(t *testing.T) {
	for k, want := range map[Knob]bool{CPUSetCPUs: true, CPUSetMems: true, MemoryWmarkRatio: true, MemoryWmarkMinAdj: true,
		MemoryLow: false, MemoryHigh: false, MemoryLimit: false, CPUQuota: false, CPUShares: false} {
		if spec, _ := Lookup(k); spec.Verbatim() != want {
			t.Errorf("%s: Verbatim() = %v, want %v", k, !want, want)
		}
	}
}
