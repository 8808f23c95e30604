package keyfile

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// keyLine is a key file line with a secret of 32 times b.
func keyLine(id string, b byte) string {
	return id + " " + base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(b), 32)))
}

// TestKeyFile: a key file is read again when the file behind its path
// changes (as the kubelet swaps a Secret's files), a bad one keeps the
// keys read before, and it is looked at no more than MinInterval allows.
func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys")
	now := time.Unix(1000, 0)
	f := New(path)
	f.now = func() time.Time { return now }
	tick := func() { now = now.Add(2 * time.Second) }
	write := func(content string) {
		tmp := filepath.Join(dir, "new")
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}

	if k, changed, err := f.Keys(); k != nil || err == nil || changed != true {
		t.Fatalf("no file: %v %v %v, want no keys and an error", k.IDs(), changed, err)
	}
	write(keyLine("k1", 'a'))
	if k, _, _ := f.Keys(); k != nil {
		t.Fatalf("read again within MinInterval: %v", k.IDs())
	}
	tick()
	k1, changed, err := f.Keys()
	if err != nil || !changed || strings.Join(k1.IDs(), ",") != "k1" {
		t.Fatalf("after write: %v %v %v", k1.IDs(), changed, err)
	}
	tick()
	if k, changed, _ := f.Keys(); k != k1 || changed {
		t.Fatalf("unchanged file read as changed: %v", changed)
	}
	write(keyLine("k2", 'b') + "\n" + keyLine("k1", 'a'))
	tick()
	k2, changed, err := f.Keys()
	if err != nil || !changed || strings.Join(k2.IDs(), ",") != "k2,k1" {
		t.Fatalf("after rotation: %v %v %v", k2.IDs(), changed, err)
	}
	write("k3 short")
	tick()
	if k, changed, err := f.Keys(); k != k2 || !changed || err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("bad file: %v %v %v, want the keys before and an error naming the file", k.IDs(), changed, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	tick()
	done := make(chan error, 1)
	go func() { _, _, err := f.Keys(); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a FIFO in the key file's place blocked the read")
	}
}
