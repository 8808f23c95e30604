package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Which numad libvirt will run: Locus (linked or copied), numad itself, or
// none; without libvirt only said.
func TestNumadCheck(t *testing.T) {
	const self = "\x7fELF locus binary"
	type file struct{ path, content, link string }
	daemon := file{path: "usr/sbin/virtqemud", content: "#!/bin/sh\n"}
	for _, tc := range []struct {
		name   string
		files  []file
		status Status
		found  string
		do     string
	}{
		{"no libvirt, no numad", nil, NA, "no libvirt daemon (libvirtd, virtqemud) and no numad", ""},
		{"no libvirt, locus as numad", []file{{path: "usr/bin/numad", link: "usr/local/bin/locus"}}, NA,
			"no libvirt daemon (libvirtd, virtqemud); numad: <root>/usr/bin/numad is this locus", ""},
		{"libvirt, no numad", []file{daemon}, Warn, "<root>/usr/sbin/virtqemud runs numad for domains with placement='auto', and there is none",
			"ln -sf <root>/usr/local/bin/locus <root>/usr/bin/numad"},
		{"libvirt, locus linked", []file{daemon, {path: "usr/bin/numad", link: "usr/local/bin/locus"}}, OK,
			"<root>/usr/bin/numad is this locus, so Locus answers", ""},
		{"libvirtd, locus copied", []file{{path: "usr/sbin/libvirtd", content: "x"}, {path: "usr/bin/numad", content: self}}, OK,
			"<root>/usr/sbin/libvirtd runs numad for placement='auto': <root>/usr/bin/numad is this locus", ""},
		{"libvirt, numad itself", []file{daemon, {path: "usr/bin/numad", content: "\x7fELF numad"}}, Warn,
			"<root>/usr/bin/numad is not this locus binary (numad itself, or another build); its advice ignores what Locus pinned",
			"remove the numad package, then ln -sf <root>/usr/local/bin/locus <root>/usr/bin/numad"},
		{"libvirt, a copy of another size", []file{daemon, {path: "usr/bin/numad", content: self + "!"}}, Warn,
			"is not this locus binary", ""},
		{"libvirt, a copy differing in a byte", []file{daemon, {path: "usr/bin/numad", content: strings.Replace(self, "l", "L", 1)}}, Warn,
			"is not this locus binary", ""},
		{"libvirt, numad first, locus later on PATH", []file{daemon, {path: "usr/bin/numad", content: "numad"},
			{path: "usr/local/bin/numad", link: "usr/local/bin/locus"}}, Warn,
			"<root>/usr/bin/numad is not this locus binary (numad itself, or another build); <root>/usr/local/bin/numad is this locus", ""},
		{"a daemon that is not executable is no libvirt", []file{{path: "usr/sbin/libvirtd", content: "x", link: "-"}}, NA,
			"no libvirt daemon", ""},
	} {
		top := t.TempDir()
		env := envAt(top)
		root := filepath.Join(top, "root")
		write := func(rel, content string, mode os.FileMode) {
			p := filepath.Join(root, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), mode); err != nil {
				t.Fatal(err)
			}
		}
		write("usr/local/bin/locus", self, 0o755)
		for _, f := range tc.files {
			switch f.link {
			case "":
				write(f.path, f.content, 0o755)
			case "-":
				write(f.path, f.content, 0o644)
			default:
				if err := os.MkdirAll(filepath.Join(root, filepath.Dir(f.path)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(root, f.link), filepath.Join(root, f.path)); err != nil {
					t.Fatal(err)
				}
			}
		}
		r := checkNumad(env)
		found, do := strings.ReplaceAll(r.Found, root, "<root>"), strings.ReplaceAll(r.Do, root, "<root>")
		if r.Status != tc.status || !strings.Contains(found, tc.found) || !strings.Contains(do, tc.do) {
			t.Errorf("%s: %s %q (do %q), want %s with %q (do %q)", tc.name, r.Status, found, do, tc.status, tc.found, tc.do)
		}
	}
}

// A FIFO planted where numad would be does not hang the check, and a
// binary unknown to the check (no Self) is never taken for Locus.
func TestNumadCheckHostile(t *testing.T) {
	top := t.TempDir()
	env := envAt(top)
	root := filepath.Join(top, "root")
	for _, d := range []string{"usr/bin", "usr/sbin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "usr/sbin/libvirtd"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "usr/bin/numad"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := checkNumad(env); r.Status != Warn || !strings.Contains(r.Found, "is not this locus binary") {
		t.Errorf("a FIFO as numad: %+v", r)
	}
	env.Self = ""
	if err := os.Remove(filepath.Join(root, "usr/bin/numad")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/bin/numad"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := checkNumad(env); r.Status != Warn || !strings.Contains(r.Do, "ln -sf /usr/local/bin/locus ") {
		t.Errorf("no Self: %+v", r)
	}
}
