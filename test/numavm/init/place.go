package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// binDir holds the copies of the test binaries the tests run from.
const binDir = "/numavm/bin"

// placeBinaries moves the test binaries into a tmpfs whose pages all sit on
// node 0 (mpol=bind:0) and returns the list pointing at the copies. The
// kernel unpacks the initramfs on whichever node it happens to run, so the
// binaries' page cache (their text, shared by a test and the children it
// starts, which no migration moves) would otherwise land on node 0 on one
// boot and node 1 on the next, and with it the local ratio the tests check.
func placeBinaries(tests []testBinary) ([]testBinary, error) {
	if err := mount(mountSpec{"tmpfs", binDir, "tmpfs", "mode=755,mpol=bind:0"}); err != nil {
		return nil, err
	}
	out := make([]testBinary, 0, len(tests))
	for _, tb := range tests {
		dst := copyPath(tb.bin)
		if err := copyFile(tb.bin, dst); err != nil {
			return nil, fmt.Errorf("copy %s to node 0: %w", tb.bin, err)
		}
		// The original's pages go back to the nodes they came from, so the
		// guest's free memory is what it was, only moved to node 0.
		if err := os.Remove(tb.bin); err != nil {
			return nil, err
		}
		tb.bin = dst
		out = append(out, tb)
	}
	return out, nil
}

// copyPath is where a binary's copy goes.
func copyPath(bin string) string { return filepath.Join(binDir, filepath.Base(bin)) }

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
