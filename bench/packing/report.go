package packing

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints one row per result: admissions, placement quality and
// decision latency. Shares are "inside/room" counts as a percentage, so a
// reader sees both how often and out of how many.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "allocator\tadmitted\trejected (n free)\tCPUs admitted\t1 NUMA | room\t1 L3 | room\t1 socket | room\tcore shared\tns/decision mean\tp50\tp99\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d (%d)\t%d/%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t\n",
			r.Allocator, r.Admitted, r.Rejected, r.RejectedFree, r.CPUsAdmitted, r.CPUsRequested,
			share(r, NUMA), share(r, L3), share(r, Socket), r.CoreShared,
			r.MeanLatency().Nanoseconds(), r.Percentile(50).Nanoseconds(), r.Percentile(99).Nanoseconds())
	}
	return tw.Flush()
}

func share(r Result, d Domain) string {
	return fmt.Sprintf("%.1f %% of %d", 100*r.InsideShare(d), r.Room[d])
}

// WriteMisses prints every kept NUMA miss as a reproducer: the CPUs pods held
// and the allocator's free CPUs before the request, the request and what it
// returned.
func WriteMisses(w io.Writer, r Result) {
	if r.MissCount == 0 {
		return
	}
	fmt.Fprintf(w, "%s: %d pods spanned NUMA nodes although one node had room; first %d:\n", r.Allocator, r.MissCount, len(r.Misses))
	for _, m := range r.Misses {
		fmt.Fprintf(w, "  pod %d: %d CPUs; held by pods %q, free %q -> got %q (%d nodes)\n",
			m.Pod, m.CPUs, m.Taken, m.Free, m.Got, m.Nodes)
	}
}

// Describe is the one-line caption of a stream, for the table's heading.
func Describe(cfg StreamConfig) string {
	return fmt.Sprintf("%d pods, seed %d, offered load %.0f %% of %d CPUs, sizes (CPUs:weight) %s",
		cfg.Pods, cfg.Seed, 100*cfg.Load, cfg.Capacity, cfg.Mix)
}
