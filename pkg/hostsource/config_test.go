package hostsource

import (
	"strings"
	"testing"
	"time"
)

const doc = "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nreservedCPUs: \"0\"\nworkloads:\n- {name: a, cgroup: x}\n"

// fakeFile is a config file the loader reads, with a clock.
type fakeFile struct {
	raw   string
	mod   time.Time
	now   time.Time
	woken []time.Duration
}

func (f *fakeFile) loader(settle time.Duration) *Loader {
	l := NewLoader("host.yaml", settle, func() time.Time { return f.now },
		func(d time.Duration) { f.woken = append(f.woken, d) })
	l.read = func(string) ([]byte, time.Time, error) { return []byte(f.raw), f.mod, nil }
	return l
}

// The loader keeps the same *Config while the bytes stay the same, keeps the
// last good config across an invalid edit (told once), and acts on a change
// only once it has settled, asking for a reconcile then.
func TestLoaderSettlesAndKeepsTheLastGood(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	f := &fakeFile{raw: doc, mod: t0.Add(-time.Hour), now: t0}
	l := f.loader(time.Second)
	if err := l.FirstLoad(4); err != nil {
		t.Fatal(err)
	}
	first := l.Good()
	if cfg, err := l.Load(4); err != nil || cfg != first {
		t.Fatalf("unchanged file: %p %v, want the same config %p", cfg, err, first)
	}

	f.raw, f.mod = strings.Replace(doc, `"0"`, `"0-1"`, 1), t0
	if cfg, err := l.Load(4); err != nil || cfg != first {
		t.Fatalf("a change not settled yet: %p %v, want the config in force", cfg, err)
	}
	if len(f.woken) != 1 || f.woken[0] != time.Second {
		t.Fatalf("wake calls %v, want one after 1s", f.woken)
	}
	f.now = t0.Add(time.Second)
	cfg, err := l.Load(4)
	if err != nil || cfg == first || cfg.Host.ReservedCPUs != "0-1" {
		t.Fatalf("settled change: %+v %v", cfg, err)
	}

	f.raw, f.mod = "workloads: [", t0.Add(-time.Hour)
	if got, err := l.Load(4); err == nil || got != cfg || !strings.Contains(err.Error(), "host.yaml") || l.LastErr() == "" {
		t.Fatalf("invalid edit: %p %v (last error %q), want the last good config and an error naming the file", got, err, l.LastErr())
	}
	if got, err := l.Load(4); err != nil || got != cfg {
		t.Fatalf("the same invalid file again: %p %v, want it told once", got, err)
	}
	f.raw = doc
	if got, err := l.Load(4); err != nil || got.Host.ReservedCPUs != "0" || l.LastErr() != "" {
		t.Fatalf("fixed file: %+v %v %q", got, err, l.LastErr())
	}
}

// The built-in config is fitted to the CPU count and reloaded when it changes.
func TestLoaderBuiltIn(t *testing.T) {
	l := NewLoader("", DefaultConfigSettle, time.Now, nil)
	if err := l.FirstLoad(1); err != nil {
		t.Fatal(err)
	}
	one := l.Good()
	if cfg, _ := l.Load(1); cfg != one {
		t.Error("the built-in config was derived again for the same CPU count")
	}
	if cfg, _ := l.Load(2); cfg == one {
		t.Error("the built-in config was not fitted to the new CPU count")
	}
	if !strings.Contains(string(DefaultConfigYAML()), "stop-on-agent-exit") {
		t.Error("built-in config does not stop its demo workloads on exit")
	}
}
