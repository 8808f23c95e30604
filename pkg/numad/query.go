package numad

import (
	"fmt"
	"strconv"
)

// Query is numad's -w question: the CPUs and memory a new VM or process
// will need.
type Query struct {
	// CentiCPUs is the CPUs in hundredths, as numad keeps them: "1.5" is
	// 150; digits past the second decimal are dropped, as numad drops them.
	CentiCPUs uint64
	// MB is the memory in MiB (numad's MB is 1024×1024 bytes; libvirt
	// passes the domain's KiB divided by 1024, rounded up); 0 when the
	// question gives none.
	MB uint64
}

// CPUs is the query's CPUs as the balancer counts them.
func (q Query) CPUs() float64 { return float64(q.CentiCPUs) / 100 }

// Bytes is the query's memory in bytes.
func (q Query) Bytes() uint64 { return q.MB << 20 }

// Bounds of a question: more than any machine has is a mistake to name,
// not a request to spread over every node. MaxCPUs is `locus advise`'s
// bound; MaxMB is 1 PiB, which also keeps Bytes from overflowing.
const (
	MaxCPUs  = 65536
	MaxMB    = 1 << 30
	maxQuery = 64 // bytes of -w text: "65536.00:1073741824" is 19
)

// ParseQuery reads -w's value, NCPUS[.DD][:MB], with numad's grammar: a
// count of CPUs, perhaps with decimals, then perhaps a colon and MiB.
// What numad refuses (no number, a sign, nothing after the colon) gets
// numad's message, "Can't parse arg value(s): VALUE"; what numad would
// misread (trailing text it silently drops, a count its int overflows) and
// sizes past any machine are refused too, each with a message naming the
// value and what is wrong with it.
func ParseQuery(s string) (Query, error) {
	if len(s) > maxQuery {
		return Query{}, fmt.Errorf("-w value of %d bytes: want NCPUS[:MB], at most %d bytes", len(s), maxQuery)
	}
	cantParse := cantParseError(printable(s))
	cpus, rest := leadingDigits(s)
	if cpus == "" {
		return Query{}, cantParse
	}
	var q Query
	whole, err := strconv.ParseUint(cpus, 10, 64)
	if err != nil || whole > MaxCPUs {
		return Query{}, fmt.Errorf("-w %s: more than %d CPUs, more than any machine has", printable(s), MaxCPUs)
	}
	q.CentiCPUs = whole * 100
	if len(rest) > 0 && rest[0] == '.' {
		var frac string
		frac, rest = leadingDigits(rest[1:])
		scale := uint64(10)
		for i := 0; i < len(frac) && i < 2; i++ {
			q.CentiCPUs += uint64(frac[i]-'0') * scale
			scale /= 10
		}
	}
	if len(rest) > 0 && rest[0] == ':' {
		var mb string
		mb, rest = leadingDigits(rest[1:])
		if mb == "" {
			return Query{}, cantParse
		}
		q.MB, err = strconv.ParseUint(mb, 10, 64)
		if err != nil || q.MB > MaxMB {
			return Query{}, fmt.Errorf("-w %s: more than %d MB (1 PiB) of memory, more than any machine has", printable(s), uint64(MaxMB))
		}
	}
	if rest != "" {
		return Query{}, fmt.Errorf("-w %s: unexpected %s after the number(s): want NCPUS[:MB]", printable(s), strconv.Quote(rest))
	}
	return q, nil
}

// cantParseError is numad's own complaint about a -w value it cannot read,
// worded as numad words it so that scripts matching it keep working.
type cantParseError string

func (e cantParseError) Error() string { return "Can't parse arg value(s): " + string(e) }

// leadingDigits splits s after its leading ASCII digits.
func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// printable is s as a message may repeat it: as is when it is plain
// printable ASCII, quoted with escapes otherwise. s is at most maxQuery
// bytes here.
func printable(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return strconv.Quote(s)
		}
	}
	return s
}
