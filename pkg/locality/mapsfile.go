package locality

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// Range is one line of /proc/PID/maps: a virtual memory area.
type Range struct {
	Start, End uint64
	Perms      string // e.g. "rw-p"
	Path       string // file, [heap], [stack], [vdso], or "" for anonymous memory
}

// Len is the size of the area in bytes.
func (r Range) Len() uint64 { return r.End - r.Start }

// Special reports kernel-provided areas ([vdso], [vvar], [vsyscall], ...)
// whose pages are not the process's to move. [heap] and [stack] are ordinary
// memory.
func (r Range) Special() bool {
	return strings.HasPrefix(r.Path, "[") && r.Path != "[heap]" && r.Path != "[stack]" &&
		!strings.HasPrefix(r.Path, "[stack:") && !strings.HasPrefix(r.Path, "[anon:")
}

// ParseMaps parses the text of /proc/PID/maps.
func ParseMaps(text string) ([]Range, error) {
	var out []Range
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if strings.TrimSpace(s) == "" {
			continue
		}
		r, err := parseMapsLine(s)
		if err != nil {
			return nil, fmt.Errorf("maps line %d %q: %w", line, clip(s), err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

func parseMapsLine(s string) (Range, error) {
	// address perms offset dev inode [path]; the path may hold spaces.
	f := strings.Fields(s)
	if len(f) < 5 {
		return Range{}, fmt.Errorf("want at least 5 fields, got %d", len(f))
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if !ok || err1 != nil || err2 != nil || end < start {
		return Range{}, fmt.Errorf("address range %q is malformed", f[0])
	}
	if len(f[1]) != 4 {
		return Range{}, fmt.Errorf("permissions %q are malformed", f[1])
	}
	r := Range{Start: start, End: end, Perms: f[1]}
	if len(f) > 5 {
		// Everything after the inode, as printed (spaces kept).
		idx := 0
		for i := 0; i < 5; i++ {
			idx += strings.Index(s[idx:], f[i]) + len(f[i])
		}
		r.Path = strings.TrimSpace(s[idx:])
	}
	return r, nil
}
