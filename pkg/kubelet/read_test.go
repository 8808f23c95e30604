package kubelet

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A pipe or a directory where a checkpoint or the configuration should be
// is named as not a regular file: Read neither blocks on the pipe (which
// would stall the agent's reconcile and the host checks) nor reads it.
func TestReadRefusesWhatIsNotAFile(t *testing.T) {
	for _, tc := range []struct{ fifo, dir string }{
		{CPUManagerFile, MemoryManagerFile},
		{MemoryManagerFile, ConfigFile},
		{ConfigFile, CPUManagerFile},
	} {
		t.Run(tc.fifo, func(t *testing.T) {
			top := t.TempDir()
			if err := syscall.Mkfifo(filepath.Join(top, tc.fifo), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(top, tc.dir), 0o755); err != nil {
				t.Fatal(err)
			}
			done := make(chan State, 1)
			go func() { done <- Read(Paths{Dir: top}) }()
			var s State
			select {
			case s = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("Read blocked on the pipe %s", tc.fifo)
			}
			if len(s.Errors) != 2 || s.CPU != nil || s.Memory != nil || s.Config != nil {
				t.Fatalf("got %+v", s)
			}
			for _, name := range []string{tc.fifo, tc.dir} {
				if !strings.Contains(s.Summary().Errors[0]+s.Summary().Errors[1], filepath.Join(top, name)+": not a regular file") {
					t.Errorf("%s not named as not a regular file: %v", name, s.Errors)
				}
			}
			if want := tc.fifo == CPUManagerFile || tc.dir == CPUManagerFile; s.CPUUnknown != want {
				t.Errorf("CPUUnknown %v, want %v", s.CPUUnknown, want)
			}
		})
	}
}
