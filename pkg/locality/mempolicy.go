package locality

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// MemPolicy is a memory policy as numa_maps prints it: the mode, its flags
// and its nodes. numa_maps shows a mapping's own policy (mbind) or else the
// process's (set_mempolicy), which is the only way to learn another
// process's policy: get_mempolicy(2) answers for the caller only.
type MemPolicy struct {
	Mode  string // default, local, prefer, bind, interleave, weighted interleave, prefer (many)
	Flags string // static, relative, balancing (joined by |), or ""
	Nodes []int
}

// ParseMemPolicy parses the policy field of numa_maps ("bind=static:1",
// "interleave:0-3", "default"). A mode this package does not know is kept
// as is: it never holds memory (see Holds).
func ParseMemPolicy(s string) (MemPolicy, error) {
	if s == "" {
		return MemPolicy{}, fmt.Errorf("no memory policy")
	}
	var p MemPolicy
	head, nodes, hasNodes := strings.Cut(s, ":")
	p.Mode, p.Flags, _ = strings.Cut(head, "=")
	if hasNodes {
		list, err := ParseNodeList(nodes)
		if err != nil {
			return MemPolicy{}, fmt.Errorf("memory policy %s: %w", topology.Quote(s), err)
		}
		p.Nodes = list
	}
	return p, nil
}

func (p MemPolicy) String() string {
	s := p.Mode
	if p.Flags != "" {
		s += "=" + p.Flags
	}
	if len(p.Nodes) > 0 {
		s += ":" + cpuset.New(p.Nodes...).String() // the kernel's "0-3" form
	}
	return s
}

// Holds reports whether the policy deliberately keeps memory away from the
// local nodes, so moving it would fight the owner's choice (and a later
// fault or NUMA balancing would put it back):
//   - bind, prefer and prefer (many) hold when they name no local node;
//   - interleave and weighted interleave hold when they name any remote
//     node, since the spread over those nodes is the point;
//   - default, local and unknown modes never hold.
func (p MemPolicy) Holds(local []int) bool {
	inLocal := func(n int) bool { return slices.Contains(local, n) }
	switch p.Mode {
	case "bind", "prefer", "prefer (many)":
		return len(p.Nodes) > 0 && !slices.ContainsFunc(p.Nodes, inLocal)
	case "interleave", "weighted interleave":
		return slices.ContainsFunc(p.Nodes, func(n int) bool { return !inLocal(n) })
	}
	return false
}
