package balancerloop

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/locus-project/locus/pkg/balancer"
)

// Options configure the NUMA balancer (docs/balancer.md): the
// workloads in the shared and BE pools, and the child cgroups of Cgroups
// (one per VM under machine.slice), are each settled on a NUMA node or L3
// cache of the pool, with their memory moved there.
type Options struct {
	Enabled bool
	// Interval is the measuring window: placements are decided this often
	// (default 10s).
	Interval time.Duration
	// Partition is numa (default) or l3.
	Partition balancer.Kind
	// Cgroups are parents, relative to the cgroup root, whose every child
	// cgroup is balanced as a group of its own (machine.slice: one per
	// libvirt VM). They are written directly and restored when the balancer
	// is turned off.
	Cgroups []string
	// NoOverflow keeps a saturated partition's groups on it even while other
	// partitions idle.
	NoOverflow bool
	// NarrowMems narrows cpuset.mems to a group's nodes on cgroup v2 too,
	// once its memory is home. On v1 it is always narrowed (that moves
	// nothing); on v2 the kernel migrates whatever is left inside the write,
	// without a bound, holding the agent's writes meanwhile, so by default
	// cpuset.mems stays wide there and new memory is local by first touch.
	NarrowMems bool
	// Config tunes the decision; zero fields take balancer.DefaultConfig's,
	// and Overflow is !NoOverflow.
	Config balancer.Config
}

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.Partition == "" {
		o.Partition = balancer.ByNUMA
	}
	def := balancer.DefaultConfig()
	c := &o.Config
	if c.MinDwell <= 0 {
		c.MinDwell = def.MinDwell
	}
	if c.MaxMoves <= 0 {
		c.MaxMoves = def.MaxMoves
	}
	if c.MinWindows <= 0 {
		c.MinWindows = def.MinWindows
	}
	if c.MinGain <= 0 {
		c.MinGain = def.MinGain
	}
	if c.MemWeight <= 0 {
		c.MemWeight = def.MemWeight
	}
	if c.Smoothing <= 0 || c.Smoothing > 1 {
		c.Smoothing = def.Smoothing
	}
	if c.OverflowOn <= 0 {
		c.OverflowOn, c.OverflowOff = def.OverflowOn, def.OverflowOff
	}
	if c.MemMargin == 0 {
		c.MemMargin = def.MemMargin
	}
	c.Overflow = !o.NoOverflow
	return o
}

// kindValue is --numa-balancer-partition: refused at parse time if wrong.
type kindValue struct{ k *balancer.Kind }

func (v kindValue) String() string {
	if v.k == nil || *v.k == "" {
		return string(balancer.ByNUMA)
	}
	return string(*v.k)
}
func (v kindValue) Set(s string) error {
	k, err := balancer.ParseKind(s)
	if err == nil {
		*v.k = k
	}
	return err
}
func (kindValue) Type() string { return "numa|l3" }

// AddFlags adds the --numa-balancer flags, for both modes of the agent.
func AddFlags(f *pflag.FlagSet, o *Options) {
	def := balancer.DefaultConfig()
	f.BoolVar(&o.Enabled, "numa-balancer", false, "settle workloads without CPUs of their own on one NUMA node (or L3) each, moving their memory there")
	f.DurationVar(&o.Interval, "numa-balancer-interval", 10*time.Second, "NUMA balancer: how often to measure and decide")
	f.Var(kindValue{&o.Partition}, "numa-balancer-partition", "NUMA balancer: partitions are NUMA nodes (numa) or L3 caches (l3)")
	f.StringSliceVar(&o.Cgroups, "numa-balancer-cgroups", nil, "NUMA balancer: balance every child cgroup of these too (e.g. machine.slice: one per VM)")
	f.DurationVar(&o.Config.MinDwell, "numa-balancer-min-dwell", def.MinDwell, "NUMA balancer: least time a group stays before it may move again")
	f.IntVar(&o.Config.MaxMoves, "numa-balancer-max-moves", def.MaxMoves, "NUMA balancer: most groups moved per interval")
	f.BoolVar(&o.NarrowMems, "numa-balancer-narrow-mems", false, "NUMA balancer: on cgroup v2 too, narrow cpuset.mems to a group's nodes once its memory is home (the kernel moves what is left inside the write)")
	f.BoolVar(&o.NoOverflow, "numa-balancer-no-overflow", false, "NUMA balancer: keep a saturated partition's groups on it even while other partitions idle")
}
