package procfs

import (
	"os"
	"testing"
)

func TestParseOwner(t *testing.T) {
	text := "Name:\tqemu\nUid:\t65534\t0\t0\t0\nGid:\t65534\t65534\t65534\t65534\nGroups:\t\n"
	o, err := ParseOwner(text)
	if err != nil {
		t.Fatal(err)
	}
	if o.UIDs != [4]int{65534, 0, 0, 0} || o.GIDs != [4]int{65534, 65534, 65534, 65534} {
		t.Fatalf("got %+v", o)
	}
	for _, bad := range []string{"Name:\tx\n", "Uid:\t1 2 3\nGid:\t1 1 1 1\n", "Uid:\t-1 0 0 0\nGid:\t1 1 1 1\n", "Uid:\t99999999999 0 0 0\nGid:\t0 0 0 0\n"} {
		if _, err := ParseOwner(bad); err == nil {
			t.Errorf("ParseOwner(%q) accepted", bad)
		}
	}
}

// The kernel's own threads carry PF_KTHREAD; kthreadd (pid 2) is one on
// every Linux host, this test's process is not.
func TestKernelThreadFlag(t *testing.T) {
	fs := New("")
	self, err := fs.Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.KernelThread() {
		t.Errorf("this process (flags %#x) reads as a kernel thread", self.Flags)
	}
	kthreadd, err := fs.Stat(2)
	if err != nil {
		t.Skip("no pid 2 in this pid namespace:", err)
	}
	if kthreadd.Comm == "kthreadd" && !kthreadd.KernelThread() {
		t.Errorf("kthreadd (flags %#x) does not read as a kernel thread", kthreadd.Flags)
	}
}

func TestOwnerExeAndSystemdCgroupOfSelf(t *testing.T) {
	fs := New("")
	o, err := fs.Owner(os.Getpid())
	if err != nil || o.UIDs[0] != os.Getuid() || o.GIDs[1] != os.Getegid() {
		t.Fatalf("Owner(self) = %+v, %v", o, err)
	}
	exe, _ := os.Executable()
	want, _ := os.Stat(exe)
	got, err := fs.ExeInfo(os.Getpid())
	if err != nil || !os.SameFile(got, want) {
		t.Fatalf("ExeInfo(self) is not %s: %v", exe, err)
	}
	if _, err := fs.SystemdCgroup(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}
