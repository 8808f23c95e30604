package hostsource

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"
)

// DefaultConfigSettle is how long a changed config file must stay the same
// before it is acted on. A writer that replaces the file in two steps
// (a valid prefix, then the rest) would otherwise have the prefix applied:
// workloads missing from it stopped, their cgroups removed. Every change
// waits, a file renamed into place too: the loader cannot tell how it was
// written. So a config change reaches the cgroups about this much later
// (docs/benchmarks.md counts it in "config written → applied").
const DefaultConfigSettle = time.Second

// maxConfigBytes bounds a HostConfig: a file larger than this is refused
// rather than read into memory.
const maxConfigBytes = 16 << 20

// readConfigFile reads the config and then, from the same open file, when it
// was last modified: a write that lands during the read leaves a recent time.
func readConfigFile(file string) ([]byte, time.Time, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(raw) > maxConfigBytes {
		return nil, time.Time{}, fmt.Errorf("larger than %d MiB", maxConfigBytes>>20)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	return raw, fi.ModTime(), nil
}

// settling says how much longer raw must stay unchanged before it is acted
// on; 0 means now. A document is stable once its modification time is at
// least l.settle old, or two reads l.settle apart returned the same bytes.
func (l *Loader) settling(raw []byte, mod time.Time) time.Duration {
	if l.settle <= 0 {
		return 0
	}
	now := l.now()
	if l.pendingRaw == nil || !bytes.Equal(raw, l.pendingRaw) {
		l.pendingRaw, l.pendingSince = raw, now
	}
	quiet := max(now.Sub(mod), now.Sub(l.pendingSince))
	if quiet >= l.settle {
		return 0
	}
	return l.settle - quiet
}

// FirstLoad loads the config the agent starts with. With no config in force
// yet it waits for the file to settle rather than start from a half-written
// one (a restart would otherwise stop the workloads it lacks).
func (l *Loader) FirstLoad(onlineCPUs int) error {
	for tries := 0; ; tries++ {
		_, err := l.Load(onlineCPUs)
		if err != nil || l.good != nil {
			return err
		}
		if tries == 20 {
			return fmt.Errorf("%s: still changing after %s; write it elsewhere and rename it into place", l.file, 20*l.settle)
		}
		time.Sleep(l.waitFor)
	}
}
