package procfs

import (
	"maps"
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
