package doctor

import (
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

func init() {
	register(Check{Name: "transparent-hugepages", Order: 70, Run: checkTHP})
}

func checkTHP(env Env) Result {
	dir := env.sys("kernel/mm/transparent_hugepage")
	enabled, err := readAttr(dir + "/enabled")
	if isMissing(err) {
		return Result{Status: NA, Found: "no " + dir + ": the kernel has no transparent huge pages"}
	}
	mode, err := selected(dir+"/enabled", enabled, err)
	if err != nil {
		return unreadable(Warn, err, "cannot tell the THP mode")
	}
	found := "enabled = " + mode
	defrag, err := readAttr(dir + "/defrag")
	if !isMissing(err) {
		defragMode, err := selected(dir+"/defrag", defrag, err)
		if err != nil {
			return Result{Status: Warn, Found: found + "; defrag: " + err.Error()}
		}
		found += ", defrag = " + defragMode
	}
	switch mode {
	case "always":
		return Result{Status: OK, Found: found + ": huge pages for any large enough anonymous mapping, asked for or not"}
	case "madvise":
		return Result{Status: OK, Found: found + ": huge pages only where a program asks (madvise)"}
	case "never":
		return Result{Status: OK, Found: found}
	}
	return Result{Status: Warn, Found: found + ": not a mode Locus knows"}
}

// selected reads the bracketed choice of a sysfs mode list
// ("always [madvise] never" → "madvise"); it passes err through.
func selected(path, s string, err error) (string, error) {
	if err != nil {
		return "", err
	}
	m, ok := parseSelected(s)
	if !ok {
		return "", &readErr{path: path, reason: topology.Quote(s) + " names no mode in [brackets]"}
	}
	return m, nil
}

// parseSelected returns the one bracketed word of s.
func parseSelected(s string) (string, bool) {
	var found string
	for _, w := range strings.Fields(s) {
		if len(w) > 2 && w[0] == '[' && w[len(w)-1] == ']' {
			if found != "" {
				return "", false
			}
			found = w[1 : len(w)-1]
		}
	}
	return found, found != ""
}
