package hostsource

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/workload"
)

//go:embed defaultconfig.yaml
var defaultConfigYAML []byte

// DefaultConfigYAML is the built-in HostConfig used without --config.
func DefaultConfigYAML() []byte { return append([]byte(nil), defaultConfigYAML...) }

// DefaultConfig is the built-in HostConfig fitted to the machine: with a
// single CPU, an exclusive CPU would leave nothing for the BE workload, so
// the demo binds no CPUs there.
func DefaultConfig(onlineCPUs int) (*workload.Config, error) {
	hc, err := hostconfig.Parse(defaultConfigYAML)
	if err != nil {
		return nil, fmt.Errorf("built-in config: %w", err)
	}
	if onlineCPUs < 2 {
		for i := range hc.Workloads {
			delete(hc.Workloads[i].Annotations, workload.AnnotationCPUSet)
		}
	}
	return workload.DeriveConfig(hc)
}

// Loader keeps the last good config in force across bad edits, and
// returns the very same *config while the file's bytes do not change, so a
// resync can tell at a glance that the config did not move.
type Loader struct {
	file    string // "" means the built-in config
	read    func(string) ([]byte, time.Time, error)
	good    *workload.Config
	goodRaw []byte // the bytes good was parsed from; nil for the built-in config
	goodCPU int    // the built-in config: the CPU count it was fitted to
	lastErr string

	// A changed file is acted on once it has settled (settle.go).
	settle       time.Duration
	now          func() time.Time
	wake         func(time.Duration) // asks for a reconcile once it may have settled
	pendingRaw   []byte              // the changed bytes last read
	pendingSince time.Time           // when they were first read
	waitFor      time.Duration       // how long the last load asked to wait
}

// NewLoader reads file ("" for the built-in config). A changed file is acted
// on once it has stayed the same for settle (0 or less: at once); now is the
// clock, and wake, when set, is asked for a reconcile once a change may have
// settled.
func NewLoader(file string, settle time.Duration, now func() time.Time, wake func(time.Duration)) *Loader {
	return &Loader{file: file, read: readConfigFile, settle: settle, now: now, wake: wake}
}

// Good is the config in force: the last good one, nil before the first.
func (l *Loader) Good() *workload.Config { return l.good }

// LastErr is the error of the file as last read, "" when it was good.
func (l *Loader) LastErr() string { return l.lastErr }

// Load returns the config to use now, and an error only when the file
// changed into something invalid (reported once per distinct error). A
// change that has not settled yet leaves the config in force as it is (nil
// before the first). The first load has no last good config to fall back
// on, so its error is fatal.
func (l *Loader) Load(onlineCPUs int) (cfg *workload.Config, fresh error) {
	var next *workload.Config
	var raw []byte
	var err error
	l.waitFor = 0
	if l.file == "" {
		if l.good != nil && l.goodCPU == onlineCPUs {
			return l.good, nil
		}
		next, err = DefaultConfig(onlineCPUs)
	} else {
		var mod time.Time
		if raw, mod, err = l.read(l.file); err == nil {
			if l.good != nil && l.lastErr == "" && bytes.Equal(raw, l.goodRaw) {
				l.pendingRaw = nil
				return l.good, nil
			}
			if l.waitFor = l.settling(raw, mod); l.waitFor > 0 {
				if l.wake != nil {
					l.wake(l.waitFor)
				}
				return l.good, nil
			}
			next, err = workload.ParseConfig(raw)
		}
		if err != nil && !strings.Contains(err.Error(), l.file) {
			err = fmt.Errorf("%s: %w", l.file, err)
		}
	}
	if err != nil {
		if err.Error() == l.lastErr {
			return l.good, nil
		}
		l.lastErr = err.Error()
		return l.good, err
	}
	l.lastErr = ""
	l.good, l.goodRaw, l.goodCPU = next, raw, onlineCPUs
	return next, nil
}
