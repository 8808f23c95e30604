package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/status"
)

// locus status lists a dedicated VM's vCPUs and emulator by their CPUs,
// vcpu10 after vcpu2, a shared VM as one, and a container-scope pod's
// containers; other workloads get no line.
func TestStatusListsEachVCPUsCPUs(t *testing.T) {
	st := status.Status{Time: time.Now(), Workloads: []status.WorkloadStatus{
		{Name: "db", LibvirtDomain: "db-1", Pool: "exclusive", CPUs: "2-5,8-11", ContainerCPUs: map[string]string{
			"vcpu0": "2,8", "vcpu2": "4,10", "vcpu10": "5,11", "vcpu1": "3,9", "emulator": "0-1"}},
		{Name: "web", LibvirtDomain: "web-front", Pool: "shared", CPUs: "0-1,6-7"},
		{Name: "pod", Pool: "exclusive", CPUs: "12-15", ContainerCPUs: map[string]string{"side": "15", "app": "12-14"}},
		{Name: "plain", Pool: "shared", CPUs: "0-1"},
	}}
	var b bytes.Buffer
	if err := renderStatus(&b, st, true, time.Second); err != nil {
		t.Fatal(err)
	}
	_, parts, _ := strings.Cut(b.String(), "PROBLEMS\n")
	lines := strings.Split(strings.TrimSpace(parts), "\n")
	want := []string{
		"db: libvirt domain db-1: vcpu0 2,8, vcpu1 3,9, vcpu2 4,10, vcpu10 5,11, emulator 0-1",
		"web: libvirt domain web-front: every thread on 0-1,6-7",
		"pod: app 12-14, side 15",
	}
	got := lines[len(lines)-len(want):]
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the parts' lines:\n%s\nwant\n%s\n(whole output:\n%s)", strings.Join(got, "\n"), strings.Join(want, "\n"), b.String())
	}
	if strings.Contains(b.String(), "plain:") {
		t.Errorf("a workload without parts got a line:\n%s", b.String())
	}
}

func TestPartOrder(t *testing.T) {
	got := partOrder(map[string]string{"vcpu10": "", "emulator": "", "vcpu2": "", "vcpu01": "", "iothread1": "", "vcpu0": ""})
	want := "vcpu0 vcpu2 vcpu10 emulator iothread1 vcpu01"
	if strings.Join(got, " ") != want {
		t.Errorf("%v, want %s", got, want)
	}
}
