package sloconfig

import "testing"

func TestLocalityForClass(t *testing.T) {
	be := Locality{Policy: LocalityBestEffort}
	every := Locality{Policy: LocalityBestEffort, MigrateIntervalMinutes: 10}
	off := Locality{Policy: LocalityNone}
	all := map[string]Locality{"lsClass": be, "beClass": off, "lsrClass": every, "systemClass": off}
	lsOnly := map[string]Locality{"lsClass": be}
	tests := []struct {
		name       string
		classes    map[string]Locality
		class      string
		guaranteed bool
		want       *Locality
		path       string
	}{
		{"LS reads lsClass", all, "LS", false, &be, "clusterStrategy.lsClass.memoryLocality"},
		{"class is case-insensitive", all, "ls", false, &be, "clusterStrategy.lsClass.memoryLocality"},
		{"BE reads beClass", all, "BE", false, &off, "clusterStrategy.beClass.memoryLocality"},
		{"BE without beClass is off", lsOnly, "BE", false, nil, "clusterStrategy.beClass.memoryLocality"},
		{"LSR reads lsrClass", all, "LSR", false, &every, "clusterStrategy.lsrClass.memoryLocality"},
		{"LSE reads lsrClass", all, "LSE", false, &every, "clusterStrategy.lsrClass.memoryLocality"},
		{"LSR falls back to lsClass", lsOnly, "LSR", false, &be, "clusterStrategy.lsClass.memoryLocality"},
		{"SYSTEM reads systemClass", all, "SYSTEM", false, &off, "clusterStrategy.systemClass.memoryLocality"},
		{"SYSTEM falls back to lsClass", lsOnly, "SYSTEM", false, &be, "clusterStrategy.lsClass.memoryLocality"},
		{"no class (Burstable) reads lsClass", all, "", false, &be, "clusterStrategy.lsClass.memoryLocality"},
		{"unlabelled Guaranteed reads lsrClass", all, "LS", true, &every, "clusterStrategy.lsrClass.memoryLocality"},
		{"unlabelled Guaranteed without lsrClass is off", lsOnly, "LS", true, nil, "clusterStrategy.lsrClass.memoryLocality"},
		{"no sections", nil, "LS", false, nil, "clusterStrategy.lsClass.memoryLocality"},
	}
	for _, tc := range tests {
		got, path := LocalityForClass(tc.classes, tc.class, tc.guaranteed)
		if path != tc.path || (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%s: got %v, %q; want %v, %q", tc.name, got, path, tc.want, tc.path)
		}
	}
}
