package cgroup

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// pageSize is the granularity memcg stores byte values in: the kernel keeps
// pages and prints pages*PAGE_SIZE, so writing 100000000 reads back 99999744.
var pageSize = int64(os.Getpagesize())

// valueKind validates a logical value, turns it into the text a version's file
// takes, and compares file texts the way the kernel means them.
type valueKind interface {
	validate(value string) error
	encode(v Version, value string) string // value already validated
	equal(v Version, current, want string) bool
}

// cpuList is the kernel list format of cpuset.cpus and cpuset.mems ("0-3,8").
type cpuList struct{}

func (cpuList) validate(s string) error {
	set, err := parseSpans(s)
	if err != nil {
		return fmt.Errorf("want a list like 0-3,8: %v", err)
	}
	if len(set) == 0 {
		// An empty cpuset evicts nothing but starves every task in it (v1
		// refuses with ENOSPC); no Locus decision ever means that.
		return fmt.Errorf("empty list")
	}
	return nil
}

func (cpuList) encode(_ Version, s string) string { return mustSpans(s).String() }

func (cpuList) equal(_ Version, current, want string) bool {
	a, errA := parseSpans(current)
	b, errB := parseSpans(want)
	if errA != nil || errB != nil {
		return current == want
	}
	return a.equal(b)
}

// bytesKind is a memory size in bytes or "max". v1Unlimited is how v1 files
// that predate "max" spell it ("-1"); empty means the file takes "max".
type bytesKind struct{ v1Unlimited string }

func (bytesKind) validate(s string) error {
	if s == "max" {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("want a byte count >= 0 or \"max\"")
	}
	return nil
}

func (k bytesKind) encode(v Version, s string) string {
	if s == "max" {
		if v == V1 && k.v1Unlimited != "" {
			return k.v1Unlimited
		}
		return s
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return strconv.FormatInt(n, 10)
}

func (bytesKind) equal(_ Version, current, want string) bool {
	a, errA := normBytes(current)
	b, errB := normBytes(want)
	if errA != nil || errB != nil {
		return current == want
	}
	return a == b
}

// normBytes maps a memory file value to what the kernel stores: whole pages,
// with every spelling of "unlimited" ("max", "-1", PAGE_COUNTER_MAX pages as
// v1 prints 9223372036854771712) as math.MaxInt64.
func normBytes(s string) (int64, error) {
	if s == "max" || s == "-1" {
		return math.MaxInt64, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a byte count", s)
	}
	if n >= math.MaxInt64/pageSize*pageSize {
		return math.MaxInt64, nil
	}
	return n / pageSize * pageSize, nil
}

// intRange is a bounded integer (percentages, adjustments, periods, ...).
type intRange struct{ min, max int64 }

func (r intRange) validate(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < r.min || n > r.max {
		return fmt.Errorf("want an integer in %d..%d", r.min, r.max)
	}
	return nil
}

func (intRange) encode(_ Version, s string) string {
	n, _ := strconv.ParseInt(s, 10, 64)
	return strconv.FormatInt(n, 10)
}

func (intRange) equal(_ Version, current, want string) bool { return sameInt(current, want) }

func sameInt(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA != nil || errB != nil {
		return a == b
	}
	return x == y
}

// minQuotaUS is the smallest CFS quota the kernel accepts (1 ms).
const minQuotaUS = 1000

// quotaKind is a CFS quota in microseconds per period, or "max". v1 spells
// unlimited -1 in cpu.cfs_quota_us; v2 cpu.max reads "<quota|max> <period>"
// and a write of the quota alone keeps the period.
type quotaKind struct{}

func (quotaKind) validate(s string) error {
	if s == "max" {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < minQuotaUS {
		return fmt.Errorf("want microseconds >= %d or \"max\"", minQuotaUS)
	}
	return nil
}

func (quotaKind) encode(v Version, s string) string {
	if s == "max" {
		if v == V1 {
			return "-1"
		}
		return s
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return strconv.FormatInt(n, 10)
}

func (quotaKind) equal(v Version, current, want string) bool {
	if v == V1 {
		return normQuota(current) == normQuota(want)
	}
	cur, w := strings.Fields(current), strings.Fields(want)
	if len(cur) == 0 || len(w) == 0 || len(w) > 2 {
		return current == want
	}
	if normQuota(cur[0]) != normQuota(w[0]) {
		return false
	}
	return len(w) == 1 || (len(cur) == 2 && sameInt(cur[1], w[1]))
}

func normQuota(s string) string {
	if s == "max" || s == "-1" {
		return "max"
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return s
}

// sharesKind is a v1 cpu.shares value; on v2 it is written to cpu.weight
// through the conversion container runtimes use, so both versions see the same
// relative weights: 2 -> 1, 1024 -> 39, 262144 -> 10000.
type sharesKind struct{}

func (sharesKind) validate(s string) error { return intRange{2, 262144}.validate(s) }

func (sharesKind) encode(v Version, s string) string {
	n, _ := strconv.ParseInt(s, 10, 64)
	if v == V2 {
		n = 1 + (n-2)*9999/262142
	}
	return strconv.FormatInt(n, 10)
}

func (sharesKind) equal(_ Version, current, want string) bool { return sameInt(current, want) }
