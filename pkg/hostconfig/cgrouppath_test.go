package hostconfig

import (
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/fuzzseed"
)

// TestCgroupPathRuleIsTheWriters: a path of the file is accepted exactly
// when the cgroup writer accepts it, with the same message.
func TestCgroupPathRuleIsTheWriters(t *testing.T) {
	for _, rel := range []string{"", "a", "a/b.slice", "/a", "a/", "a//b", ".", "a/..", "../a", "a/./b", "a\x00b", "..a", "a..", " "} {
		agree(t, rel)
	}
}

func FuzzCgroupPathRuleIsTheWriters(f *testing.F) {
	fuzzseed.Add(f, fuzzseed.Same)
	fuzzseed.Add(f, func(s string) string { return "locus.slice/" + s })
	f.Fuzz(agree)
}

func agree(t *testing.T, rel string) {
	t.Helper()
	mine, writers := checkCgroupPath(rel), cgroup.CheckRel(rel)
	if (mine == nil) != (writers == nil) || (mine != nil && mine.Error() != writers.Error()) {
		t.Fatalf("%q: the file says %v, the writer %v", rel, mine, writers)
	}
}
