package decide

import (
	"testing"
)

// TestMovesPreferFewerResidentBytes: of two moves of as many CPUs, the
// decision makes the one that migrates fewer resident bytes, as the
// observation reads them, whichever of the two that is; without them it
// still moves one.
func TestMovesPreferFewerResidentBytes(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name     string
		resident map[string]map[int]uint64
		want     string // the workload moved; "" for either
	}{
		{"x holds more", map[string]map[int]uint64{"x": {0: 900 * mib}, "y": {1: 10 * mib}}, "y"},
		{"y holds more", map[string]map[int]uint64{"x": {0: 10 * mib}, "y": {1: 900 * mib}}, "x"},
		{"only x's is known", map[string]map[int]uint64{"x": {0: 10 * mib}}, "y"},
		{"none known", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, mem := fragmented(true, "x", "y")
			obs.Resident = tc.resident
			rd := Decide(obs, mem)
			if len(rd.Desired.Moves) != 1 {
				t.Fatalf("moves %+v, want one", rd.Desired.Moves)
			}
			m := rd.Desired.Moves[0]
			if tc.want != "" && m.Workload != tc.want {
				t.Errorf("moved %s, want %s (resident %v)", m.Workload, tc.want, tc.resident)
			}
			if want := tc.resident[m.Workload][m.FromNodes[0]]; m.Bytes != want {
				t.Errorf("move of %s says %d bytes, want %d", m.Workload, m.Bytes, want)
			}
		})
	}
}
