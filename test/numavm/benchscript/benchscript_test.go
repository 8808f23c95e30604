package benchscript

import (
	"strings"
	"testing"
)

func TestEnv(t *testing.T) {
	s := Script{Settings: []string{"ROUNDS", "BE_MEMBW_SIZE", "LAYOUT"}}
	env := s.Env([]string{"PATH=/bin", "LOCUS_NUMAVM_ROUNDS=3", "LOCUS_NUMAVM_BE_MEMBW_SIZE=32Mi",
		"LOCUS_NUMAVM_NODES=2", "ROUNDSX=1", "LOCUS_NUMAVM_LAYOUT=shared"}, "LAYOUT=pinned")
	got := strings.Join(env, " ")
	for _, want := range []string{"PATH=/bin", "LOCUS=/usr/bin/locus", "ROUNDS=3", "BE_MEMBW_SIZE=32Mi"} {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("env %q lacks %s", got, want)
		}
	}
	if strings.Contains(got, " NODES=") {
		t.Errorf("env %q passes a guest variable that is not a setting", got)
	}
	// The last of a name is what a process sees: extra must come last.
	if env[len(env)-1] != "LAYOUT=pinned" {
		t.Errorf("env %q: extra LAYOUT=pinned is not last, a setting would override it", got)
	}
}

func TestRows(t *testing.T) {
	lines := []string{"# round 1", "alone,1,SET,1,2,3", "layout,mode", "locus,1,GET,1,2,3", "pinned,alone"}
	if n := Rows(lines, "alone,", "locus,"); n != 2 {
		t.Errorf("Rows = %d, want 2", n)
	}
	if n := Rows(lines); n != 0 {
		t.Errorf("Rows with no prefix = %d, want 0", n)
	}
}
