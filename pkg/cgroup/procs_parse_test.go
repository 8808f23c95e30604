package cgroup

import (
	"slices"
	"strings"
	"testing"
)

func TestParsePids(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []int
		bad  string // the text the error quotes
	}{
		{text: "", want: nil},
		{text: "\n\n", want: nil},
		{text: "12\n", want: []int{12}},
		{text: "12\n7\n4194304\n", want: []int{12, 7, 4194304}},
		{text: "12\r\n7", want: []int{12, 7}},
		{text: "12\n\n7\n", want: []int{12, 7}},
		{text: "12\nx\n", bad: `"x"`},
		{text: "0\n", bad: `"0"`},
		{text: "-3\n", bad: `"-3"`},
		{text: " 5\n", bad: `" 5"`},
	} {
		got, err := parsePids("cg/cgroup.procs", tc.text)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), "cg/cgroup.procs") {
				t.Errorf("%q: err %v, want one naming the file and %s", tc.text, err, tc.bad)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.text, got, err, tc.want)
		}
	}
}

func FuzzParsePids(f *testing.F) {
	for _, s := range []string{"", "1\n2\n", "1\r\n", "x", "\n\n3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := parsePids("p", text)
		if err != nil {
			return
		}
		if len(got) > strings.Count(text, "\n")+1 {
			t.Fatalf("%q: %d pids from %d lines", text, len(got), strings.Count(text, "\n")+1)
		}
		for _, p := range got {
			if p <= 0 {
				t.Fatalf("%q: pid %d", text, p)
			}
		}
	})
}
