package procfs

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseCPUTimes(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[int]CPUTimes
		wantErr    bool
	}{
		{name: "every field", text: "cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 65 10 15 60 40 5 5 5 7 0\nintr 1 2\n",
			want: map[int]CPUTimes{0: {Busy: 105, Total: 205}}},
		{name: "an old kernel's four fields", text: "cpu2 1 0 0 1\n", want: map[int]CPUTimes{2: {Busy: 1, Total: 2}}},
		{name: "guest time not counted twice", text: "cpu1 10 0 0 0 0 0 0 0 10 10\n", want: map[int]CPUTimes{1: {Busy: 10, Total: 10}}},
		{name: "no per-cpu line", text: "cpu  1 2 3 4\n", wantErr: true},
		{name: "not a count", text: "cpu0 1 x 3 4\n", wantErr: true},
		{name: "not a cpu", text: "cpux 1 2 3 4\n", wantErr: true},
		{name: "too few fields", text: "cpu0 1 2 3\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCPUTimes(tt.text)
			if (err != nil) != tt.wantErr || !tt.wantErr && !maps.Equal(got, tt.want) {
				t.Errorf("got %v, %v; want %v (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// CPUTimes reads the root's stat file, and refuses one past its bound
// instead of reading it whole.
func TestCPUTimesReadsStatBounded(t *testing.T) {
	root := t.TempDir()
	stat := filepath.Join(root, "stat")
	if err := os.WriteFile(stat, []byte("cpu  2 0 2 6 0 0 0 0 0 0\ncpu0 2 0 2 6 0 0 0 0 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := New(root).CPUTimes(); err != nil || got[0] != (CPUTimes{Busy: 4, Total: 10}) {
		t.Errorf("CPUTimes = %v, %v", got, err)
	}
	if err := os.WriteFile(stat, []byte("cpu0 1 0 1 1 0 0 0 0 0 0\n"+strings.Repeat("x", maxStat)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(root).CPUTimes(); err == nil || !strings.Contains(err.Error(), stat) {
		t.Errorf("a stat file past the bound: %v", err)
	}
}
