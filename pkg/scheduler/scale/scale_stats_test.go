package scale

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// quantile is the q-quantile (0..1) of sorted durations, nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// histogram is one of the scheduler's histograms summed over the series
// whose labels match: upper bounds and cumulative counts.
type histogram struct {
	bounds []float64
	counts []uint64
}

// schedulerHistogram reads name from a scheduler's metrics (see
// schedulerMetrics; it only grows, so a pass takes the difference of two
// reads).
func schedulerHistogram(families []*dto.MetricFamily, name string, labels map[string]string) histogram {
	var h histogram
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !matches(m, labels) || m.GetHistogram() == nil {
				continue
			}
			for i, b := range m.GetHistogram().GetBucket() {
				if len(h.bounds) <= i {
					h.bounds = append(h.bounds, b.GetUpperBound())
					h.counts = append(h.counts, 0)
				}
				h.counts[i] += b.GetCumulativeCount()
			}
		}
	}
	return h
}

// schedulerCounts reads a counter of the scheduler's, summed by the value
// of one label (it only grows: take differences).
func schedulerCounts(families []*dto.MetricFamily, name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

func matches(m *dto.Metric, labels map[string]string) bool {
	for k, v := range labels {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// since is h minus an earlier read of the same histogram.
func (h histogram) since(before histogram) histogram {
	out := histogram{bounds: h.bounds, counts: slices.Clone(h.counts)}
	for i := range out.counts {
		if i < len(before.counts) {
			out.counts[i] -= before.counts[i]
		}
	}
	return out
}

// quantile interpolates inside the bucket the q-quantile falls in, as
// Prometheus's histogram_quantile does; the buckets double, so it is a
// coarse figure. Beyond the last bound it says the last bound.
func (h histogram) quantile(q float64) time.Duration {
	if len(h.counts) == 0 || h.counts[len(h.counts)-1] == 0 {
		return 0
	}
	total := float64(h.counts[len(h.counts)-1])
	rank := q * total
	lower, below := 0.0, 0.0
	for i, c := range h.counts {
		if float64(c) >= rank {
			in := float64(c) - below
			frac := 1.0
			if in > 0 {
				frac = (rank - below) / in
			}
			return time.Duration((lower + (h.bounds[i]-lower)*frac) * float64(time.Second))
		}
		lower, below = h.bounds[i], float64(c)
	}
	return time.Duration(h.bounds[len(h.bounds)-1] * float64(time.Second))
}

// cpuTimes are the CPU times of this process (the scheduler under test,
// the pod creators and watchers) and of its children (kube-apiserver,
// etcd, kwok), by command name.
func cpuTimes() map[string]time.Duration {
	out := map[string]time.Duration{}
	self := os.Getpid()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		name, ppid, cpu, ok := procStat(d)
		switch {
		case !ok:
		case pid == self:
			out["test+scheduler"] += cpu
		case ppid == self:
			out[name] += cpu
		}
	}
	return out
}

// procStat reads a process's name, parent and user+system time.
func procStat(dir string) (name string, ppid int, cpu time.Duration, ok bool) {
	raw, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return "", 0, 0, false
	}
	s := string(raw)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", 0, 0, false
	}
	name = s[open+1 : closing]
	f := strings.Fields(s[closing+1:])
	if len(f) < 13 {
		return "", 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return name, ppid, time.Duration(utime+stime) * tick, true
}

// loadAvg is the 1-minute load average.
func loadAvg() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	v, _ := strconv.ParseFloat(strings.Fields(string(raw))[0], 64)
	return v
}

// apiRequests are the apiserver's request counts (apiserver_request_total)
// by verb and resource ("PATCH pods", "POST pods/binding"), from its
// /metrics, or nil when they cannot be read.
func apiRequests() map[string]float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := cp.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		labels := map[string]string{}
		for _, kv := range strings.Split(line[len("apiserver_request_total{"):end], ",") {
			if k, val, ok := strings.Cut(kv, "="); ok {
				labels[k] = strings.Trim(val, `"`)
			}
		}
		key := labels["verb"] + " " + labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		out[key] += v
	}
	return out
}
