package cgroup

import (
	"maps"
	"testing"
)

func TestParseNumaStat(t *testing.T) {
	v2 := "anon N0=4096 N1=8192\nfile N0=1 N1=2\nshmem N0=0 N1=4096\nanon_thp N0=0 N1=0\n"
	v1 := "total=10 N0=6 N1=4\nanon=8 N0=4 N1=4\nhierarchical_total=20 N0=12 N1=8\nhierarchical_anon=16 N0=8 N1=8\n"
	tests := []struct {
		name, text string
		keys       []string
		unit       uint64
		want       map[int]uint64
		wantErr    bool
	}{
		{name: "v2 anon and shmem", text: v2, keys: []string{"anon", "shmem"}, unit: 1, want: map[int]uint64{0: 4096, 1: 12288}},
		{name: "v2 anon and file", text: v2, keys: []string{"anon", "file"}, unit: 1, want: map[int]uint64{0: 4097, 1: 8194}},
		{name: "v1 pages", text: v1, keys: []string{Hierarchical(v1, "anon")}, unit: 4096, want: map[int]uint64{0: 8 * 4096, 1: 8 * 4096}},
		{name: "v1 without hierarchical lines", text: "total=10 N0=6 N1=4\n", keys: []string{Hierarchical("total=10 N0=6 N1=4\n", "total")},
			unit: 4096, want: map[int]uint64{0: 6 * 4096, 1: 4 * 4096}},
		{name: "no such line", text: v2, keys: []string{"total"}, unit: 1, wantErr: true},
		{name: "malformed field", text: "anon N0=4096 N1\n", keys: []string{"anon"}, unit: 1, wantErr: true},
		{name: "not a count", text: "anon N0=x\n", keys: []string{"anon"}, unit: 1, wantErr: true},
		{name: "negative node", text: "anon N-1=4\n", keys: []string{"anon"}, unit: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNumaStat(tt.text, tt.keys, tt.unit)
			if (err != nil) != tt.wantErr || !tt.wantErr && !maps.Equal(got, tt.want) {
				t.Errorf("got %v, %v; want %v (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
