package workload

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/hostconfig"
)

func TestParseDevices(t *testing.T) {
	tests := []struct {
		name    string
		raw     []string
		want    []string
		wantErr string
	}{
		{name: "none", raw: nil},
		{name: "canonical", raw: []string{"0000:3b:00.0", "0000:af:1f.7"}, want: []string{"0000:3b:00.0", "0000:af:1f.7"}},
		{name: "no domain, upper case", raw: []string{"3B:00.1"}, want: []string{"0000:3b:00.1"}},
		{name: "a VMD domain", raw: []string{"10000:01:00.0"}, want: []string{"10000:01:00.0"}},
		{name: "a short domain", raw: []string{"1:01:00.0"}, wantErr: `devices[0]: pci address "1:01:00.0": want [domain:]bus:device.function`},
		{name: "twice", raw: []string{"0000:3b:00.0", "3b:00.0"},
			wantErr: `devices[1]: "3b:00.0" is devices[0] again`},
		{name: "no function", raw: []string{"0000:3b:00"},
			wantErr: `devices[0]: pci address "0000:3b:00": want [domain:]bus:device.function, e.g. 0000:3b:00.0`},
		{name: "device above 1f", raw: []string{"0000:3b:20.0"}, wantErr: `devices[0]: pci address "0000:3b:20.0": want [domain:]bus:device.function, e.g. 0000:3b:00.0`},
		{name: "function 8", raw: []string{"0000:3b:00.8"}, wantErr: `devices[0]: pci address "0000:3b:00.8": want [domain:]bus:device.function, e.g. 0000:3b:00.0`},
		{name: "not hex", raw: []string{"0000:3g:00.0"}, wantErr: `devices[0]: pci address "0000:3g:00.0": want [domain:]bus:device.function, e.g. 0000:3b:00.0`},
		{name: "empty domain", raw: []string{":3b:00.0"}, wantErr: `devices[0]: pci address ":3b:00.0": want [domain:]bus:device.function, e.g. 0000:3b:00.0`},
		{name: "domain too wide", raw: []string{"123456789:3b:00.0"}, wantErr: `devices[0]: pci address "123456789:3b:00.0": want [domain:]bus:device.function, e.g. 0000:3b:00.0`},
		{name: "a path", raw: []string{"../../0000:3b:00.0"}, wantErr: `devices[0]: pci address "../../0000:3b:00.0": want [domain:]bus:device.function, e.g. 0000:3b:00.0`},
		{name: "huge", raw: []string{strings.Repeat("0", 1<<20)}, wantErr: `devices[0]: pci address "0000000000000000000000000000000000000000000000000000000000000000"… (1048576 bytes): want [domain:]bus:device.function`},
		{name: "too many", raw: slices.Repeat([]string{"0000:3b:00.0"}, MaxDevices+1), wantErr: "devices: 17 devices, at most 16"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDevices("devices", tc.raw)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to start %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, %v, want %q", got, err, tc.want)
			}
		})
	}
}

// TestFromHostConfigDevices: the devices reach the workload canonical; a
// list that cannot be read is a problem naming the field and value, and the
// workload runs in the shared pool rather than on CPUs chosen without them.
func TestFromHostConfigDevices(t *testing.T) {
	doc := func(devices string) hostconfig.Workload {
		hc, err := hostconfig.Parse([]byte("apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n" +
			"- {name: gpu, cgroup: x, resources: {limits: {cpu: 2}}, annotations: {cpuset-scheduler: \"true\"}, devices: " + devices + "}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return hc.Workloads[0]
	}
	s := FromHostConfig(doc(`["3B:00.0", "0000:af:00.1"]`), "x")
	if !slices.Equal(s.Plan.Devices, []string{"0000:3b:00.0", "0000:af:00.1"}) || !s.Plan.CPU.Exclusive || len(s.Problems) > 0 {
		t.Fatalf("devices %q, need %+v, problems %v", s.Plan.Devices, s.Plan.CPU, s.Problems)
	}
	s = FromHostConfig(doc(`["0000:3b:00.0", "0000:3b:00.9"]`), "x")
	want := `devices[1]: pci address "0000:3b:00.9": want [domain:]bus:device.function, e.g. 0000:3b:00.0; running in the shared pool`
	if s.Plan.CPU.Exclusive || s.Plan.Devices != nil || len(s.Problems) != 1 ||
		s.Problems[0].Reason != ReasonInvalidDevices || s.Problems[0].Message != want {
		t.Fatalf("need %+v, devices %q, problems %+v", s.Plan.CPU, s.Plan.Devices, s.Problems)
	}
}

// FuzzParseDevices: a HostConfig's devices are written by hand or by a
// tool; whatever they say, the answer comes in bounded time, an error names
// the list, and what is accepted is canonical: read again, it is itself.
func FuzzParseDevices(f *testing.F) {
	f.Add("0000:3b:00.0\n3b:00.1\n10000:01:1f.7")
	f.Add("0000:3b:00.0\n0000:3B:00.0")
	f.Add("ffffffff:ff:1f.7")
	fuzzseed.Add(f, fuzzseed.Same)
	fuzzseed.Add(f, func(s string) string { return "0000:3b:00.0\n" + s })
	f.Fuzz(func(t *testing.T, raw string) {
		list := strings.Split(raw, "\n")
		var got []string
		var err error
		fuzzseed.Timed(t, "ParseDevices", func() { got, err = ParseDevices("devices", list) })
		fuzzseed.CheckError(t, err, "devices")
		if err != nil {
			return
		}
		if len(got) != len(list) || len(got) > MaxDevices {
			t.Fatalf("%q read as %q", list, got)
		}
		again, err := ParseDevices("devices", got)
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("%q read again as %q, %v", got, again, err)
		}
		for _, a := range got {
			if len(a) < len("0000:00:00.0") || strconv.Quote(a) != `"`+a+`"` {
				t.Fatalf("accepted %q", a)
			}
		}
	})
}
