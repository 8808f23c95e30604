package kubelet

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// The Reader reads nothing without a directory, reads the files once, and
// again only when one of them changed.
func TestReaderRereadsOnlyChangedFiles(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var r Reader
	r.Refresh(Paths{}, log)
	if _, read := r.State(); read {
		t.Fatal("read with no directory")
	}
	dir := t.TempDir()
	write := func(content string) {
		tmp := filepath.Join(dir, ".tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, CPUManagerFile)); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"policyName":"static","defaultCpuSet":"0-2","entries":{"u1":{"app":"3"}},"checksum":0}`)
	p := Paths{Dir: dir}
	r.Refresh(p, log)
	st, read := r.State()
	if !read || st.CPU == nil || st.CPU.Policy != "static" {
		t.Fatalf("first read: %+v, %v", st, read)
	}
	// Unchanged files are not read again: what was read stays.
	r.state.CPU = nil
	r.Refresh(p, log)
	if st, _ := r.State(); st.CPU != nil {
		t.Fatal("read again with no file changed")
	}
	write(`{"policyName":"none","defaultCpuSet":"0-3","checksum":0}`)
	r.Refresh(p, log)
	if st, _ := r.State(); st.CPU == nil || st.CPU.Policy != "none" {
		t.Fatalf("after a change: %+v", st)
	}
}
