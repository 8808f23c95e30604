// Package cpuburst decides CPU Burst, the protocol ack-koordinator and
// Koordinator speak for a workload throttled by its CFS quota: a burst
// buffer (cpu.cfs_burst_us, v2 cpu.max.burst) the kernel fills with the
// quota a container left unused and lets it spend above the quota later
// (cpuBurstOnly), and a CFS quota raised step by step while the container
// is throttled and the node's shared pool is not busy (cfsQuotaBurstOnly);
// "auto" is both. It is pure: pkg/sloconfig decodes the cpu-burst-config
// ConfigMap key (and, for pkg/workload, the pod annotation), pkg/decide
// turns the decision into cgroup writes, and the agent observes the
// throttle counters.
package cpuburst

import "fmt"

// Policy is the protocol's policy field.
type Policy string

const (
	Auto           Policy = "auto"
	CPUBurstOnly   Policy = "cpuBurstOnly"
	CFSQuotaBurst  Policy = "cfsQuotaBurstOnly"
	None           Policy = "none"
	DefaultPolicy         = None
	defaultBurst          = 1000 // cpuBurstPercent, as ack-koordinator documents it
	defaultCeiling        = 300  // cfsQuotaBurstPercent
	defaultPeriod         = -1   // cfsQuotaBurstPeriodSeconds: no time limit
	defaultShare          = 50   // sharePoolThresholdPercent
)

// Config is one set of the protocol's fields, as a pod annotation, a
// cluster strategy or a node strategy gives them; nil fields were not given.
type Config struct {
	Policy                     *Policy
	CPUBurstPercent            *int64
	CFSQuotaBurstPercent       *int64
	CFSQuotaBurstPeriodSeconds *int64
	SharePoolThresholdPercent  *int64
}

// Over lays c on base: each field c gives wins.
func (c Config) Over(base Config) Config {
	if c.Policy != nil {
		base.Policy = c.Policy
	}
	for _, f := range []struct{ from, to **int64 }{
		{&c.CPUBurstPercent, &base.CPUBurstPercent},
		{&c.CFSQuotaBurstPercent, &base.CFSQuotaBurstPercent},
		{&c.CFSQuotaBurstPeriodSeconds, &base.CFSQuotaBurstPeriodSeconds},
		{&c.SharePoolThresholdPercent, &base.SharePoolThresholdPercent},
	} {
		if *f.from != nil {
			*f.to = *f.from
		}
	}
	return base
}

// NodeConfig is cpu-burst-config on this node: clusterStrategy with the
// first nodeStrategies entry selecting the node merged over it.
type NodeConfig struct {
	Strategy Config
	// Source names where Strategy came from, for status lines:
	// "clusterStrategy" or the nodeStrategies entry's name.
	Source string
}

// Settings are the fields in force for one workload, defaults filled in.
type Settings struct {
	Policy                     Policy
	CPUBurstPercent            int64
	CFSQuotaBurstPercent       int64
	CFSQuotaBurstPeriodSeconds int64
	SharePoolThresholdPercent  int64
	// From says which layers gave them: "annotation over clusterStrategy".
	From string
}

// Resolve gives the settings of a workload: its own fields (annotation)
// over the node's strategy over the protocol's defaults.
func Resolve(own *Config, node NodeConfig) Settings {
	c := node.Strategy
	from := node.Source
	if from == "" {
		from = "defaults"
	}
	if own != nil {
		c = own.Over(c)
		from = "annotation over " + from
	}
	s := Settings{Policy: DefaultPolicy, CPUBurstPercent: defaultBurst, CFSQuotaBurstPercent: defaultCeiling,
		CFSQuotaBurstPeriodSeconds: defaultPeriod, SharePoolThresholdPercent: defaultShare, From: from}
	if c.Policy != nil {
		s.Policy = *c.Policy
	}
	set := func(to *int64, v *int64) {
		if v != nil {
			*to = *v
		}
	}
	set(&s.CPUBurstPercent, c.CPUBurstPercent)
	set(&s.CFSQuotaBurstPercent, c.CFSQuotaBurstPercent)
	set(&s.CFSQuotaBurstPeriodSeconds, c.CFSQuotaBurstPeriodSeconds)
	set(&s.SharePoolThresholdPercent, c.SharePoolThresholdPercent)
	return s
}

// BurstBuffer says whether the policy sets the burst file.
func (s Settings) BurstBuffer() bool { return s.Policy == Auto || s.Policy == CPUBurstOnly }

// QuotaBurst says whether the policy raises the CFS quota.
func (s Settings) QuotaBurst() bool { return s.Policy == Auto || s.Policy == CFSQuotaBurst }

// Classes that never burst: LSR and LSE hold CPUs of their own, and BE must
// not take more than its limit from the others (as Koordinator decides).
const (
	classLSR = "LSR"
	classLSE = "LSE"
	classBE  = "BE"
)

// Eligible says whether a workload of this class may burst, and why not.
func Eligible(class string) (bool, string) {
	switch class {
	case classLSR, classLSE:
		return false, "class " + class + " holds CPUs of its own: no burst"
	case classBE:
		return false, "class BE never bursts"
	}
	return true, ""
}

// PeriodUS is the CFS period the kubelet gives containers (its default
// cpuCFSQuotaPeriod) and that the protocol's percentages are taken over.
const PeriodUS = 100_000

// minQuotaUS is the smallest quota the kubelet writes.
const minQuotaUS = 1000

// BaseQuotaUS is the CFS quota the kubelet derives from a CPU limit in
// millicores, as it writes it on creation and on resize.
func BaseQuotaUS(limitMilli int64) int64 {
	return max(limitMilli*PeriodUS/1000, minQuotaUS)
}

// BurstUS is a container's burst buffer: its limit times cpuBurstPercent
// over one period, never above its base quota, since the kernel refuses a
// burst larger than the quota (and would with any quota the raise brings
// back down to the base).
func BurstUS(limitMilli, percent int64) int64 {
	if limitMilli <= 0 || percent <= 0 {
		return 0
	}
	return min(limitMilli*PeriodUS/1000*percent/100, BaseQuotaUS(limitMilli))
}

// Why is a short status line for settings.
func (s Settings) Why() string {
	return fmt.Sprintf("%s: policy %s, cpuBurstPercent %d, cfsQuotaBurstPercent %d, cfsQuotaBurstPeriodSeconds %d, sharePoolThresholdPercent %d",
		s.From, s.Policy, s.CPUBurstPercent, s.CFSQuotaBurstPercent, s.CFSQuotaBurstPeriodSeconds, s.SharePoolThresholdPercent)
}
