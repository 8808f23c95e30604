package boundedread

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileReadsUpToTheCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := File(path, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("a file of exactly the cap: %q, %v", b, err)
	}
	_, err := File(path, 9)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Path != path || err.Error() != path+": larger than 9 bytes, the most read" {
		t.Errorf("a file over the cap: %v", err)
	}
	if _, err := File(filepath.Join(t.TempDir(), "missing"), 10); !errors.Is(err, fs.ErrNotExist) ||
		!strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing file: %v", err)
	}
}

// An endless device is refused after the cap, not read until memory runs out.
func TestFileStopsOnAnEndlessDevice(t *testing.T) {
	_, err := File("/dev/zero", 1<<20)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "/dev/zero: larger than 1 MiB") {
		t.Fatalf("/dev/zero: %v", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{16 << 20: "16 MiB", 64 << 10: "64 KiB", 100: "100 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// A regular file is read into a buffer of the size it had when opened; one
// that grew since is still read whole up to the cap, and refused beyond it.
func TestSizedReadsPastAStaleSize(t *testing.T) {
	text := "0123456789"
	if b, err := sized(strings.NewReader(text), "f", 10, 3); err != nil || string(b) != text {
		t.Errorf("grown within the cap: %q, %v", b, err)
	}
	var tl *TooLargeError
	if _, err := sized(strings.NewReader(text), "f", 9, 3); !errors.As(err, &tl) {
		t.Errorf("grown beyond the cap: %v", err)
	}
	if b, err := sized(strings.NewReader(text), "f", 10, 11); err != nil || string(b) != text {
		t.Errorf("its size plus one: %q, %v", b, err)
	}
}
