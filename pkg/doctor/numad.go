package doctor

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func init() {
	register(Check{Name: "libvirt-numad", Order: 165, Run: checkNumad})
}

// numadPaths are where libvirt finds numad: the path its build recorded
// (the distributions' packages install /usr/bin/numad), or the bare name
// looked up on PATH, which reaches the others.
var numadPaths = []string{"usr/bin/numad", "usr/sbin/numad", "usr/local/bin/numad", "usr/local/sbin/numad"}

// libvirtDaemons are the daemons that start QEMU domains and run numad:
// the monolithic libvirtd or the modular virtqemud.
var libvirtDaemons = []string{"usr/sbin/libvirtd", "usr/sbin/virtqemud", "usr/bin/libvirtd", "usr/bin/virtqemud"}

// checkNumad says which numad libvirt will run for a domain with
// placement='auto': Locus (this binary, linked or copied), numad itself,
// or none, when the domain would not start. Without libvirt it is only
// said, n/a.
func checkNumad(env Env) Result {
	// The first numad found is the one libvirt runs: its recorded path,
	// /usr/bin/numad, comes first.
	var found []string
	locus := false
	for _, rel := range numadPaths {
		path := env.bin(rel)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if isLocus(path, env.Self) {
			locus = locus || len(found) == 0
			found = append(found, path+" is this locus")
		} else {
			found = append(found, path+" is not this locus binary (numad itself, or another build)")
		}
	}
	libvirt := ""
	for _, rel := range libvirtDaemons {
		if isExecutable(env.bin(rel)) {
			libvirt = env.bin(rel)
			break
		}
	}
	link := "ln -sf " + orSelf(env.Self) + " " + env.bin(numadPaths[0])
	numads := strings.Join(found, "; ")
	switch {
	case libvirt == "" && numads == "":
		return Result{Status: NA, Found: "no libvirt daemon (libvirtd, virtqemud) and no numad"}
	case libvirt == "":
		return Result{Status: NA, Found: "no libvirt daemon (libvirtd, virtqemud); numad: " + numads}
	case numads == "":
		return Result{Status: Warn, Found: libvirt + " runs numad for domains with placement='auto', and there is none: such domains do not start",
			Do: link + " (docs/kvm.md), so that Locus answers"}
	case locus:
		return Result{Status: OK, Found: libvirt + " runs numad for placement='auto': " + numads + ", so Locus answers, leaving out what the agent pinned"}
	}
	return Result{Status: Warn, Found: libvirt + " runs numad for placement='auto': " + numads + "; its advice ignores what Locus pinned",
		Do: "remove the numad package, then " + link + " (docs/kvm.md)"}
}

func (e Env) bin(rel string) string { return filepath.Join(e.BinRoot, rel) }

func orSelf(self string) string {
	if self == "" {
		return "/usr/local/bin/locus"
	}
	return self
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// isLocus reports whether path is the locus binary self: the same file
// (through links), or a copy of it, byte for byte.
func isLocus(path, self string) bool {
	if self == "" {
		return false
	}
	a, errA := os.Stat(path)
	b, errB := os.Stat(self)
	if errA != nil || errB != nil || !a.Mode().IsRegular() || !b.Mode().IsRegular() {
		return false
	}
	if os.SameFile(a, b) {
		return true
	}
	return a.Size() == b.Size() && sameContent(path, self)
}

// sameContent compares two files of equal size a block at a time, so that
// a binary of any size is compared in bounded memory.
func sameContent(p, q string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	g, err := os.Open(q)
	if err != nil {
		return false
	}
	defer g.Close()
	bf, bg := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		n, errF := io.ReadFull(f, bf)
		m, errG := io.ReadFull(g, bg)
		if n != m || !bytes.Equal(bf[:n], bg[:m]) {
			return false
		}
		endF := errors.Is(errF, io.EOF) || errors.Is(errF, io.ErrUnexpectedEOF)
		endG := errors.Is(errG, io.EOF) || errors.Is(errG, io.ErrUnexpectedEOF)
		if endF || endG {
			return endF && endG
		}
		if errF != nil || errG != nil {
			return false
		}
	}
}

// selfExecutable is the running binary, for Env.Self's default; "" when
// the kernel does not say.
func selfExecutable() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
