package agent

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/proctest"
	"github.com/locus-project/locus/pkg/cgroup"
)

// Any local user can name a process qemu-system-x86_64 and give it the
// argument guest=vm1: the match must adopt only the user it names.
func TestMatchAdoptsOnlyTheNamedUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a process as nobody")
	}
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("locus.slice/vm1")
	mine := proctest.StartAs(t, 0, 0, "602.25")
	nobody := proctest.StartAs(t, 65534, 65534, "602.25")
	h := newHarness(t, tree, head+"workloads:\n- {name: vm1, match: {comm: \"sle*\", cmdline: \"602.25\", uid: 0}}\n", nil)
	h.reconcile()
	got := strings.Fields(tree.get("cpuset", "locus.slice/vm1", "cgroup.procs"))
	if !slices.Equal(got, []string{strconv.Itoa(mine)}) {
		t.Fatalf("cgroup.procs = %v, want only root's %d (not nobody's %d)", got, mine, nobody)
	}
}
