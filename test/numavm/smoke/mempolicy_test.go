package smoke

import (
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestBindAndMovePages allocates 64 MiB bound to a far node, checks every page
// landed there, moves the region to node 0 with move_pages(2) and checks again.
func TestBindAndMovePages(t *testing.T) {
	l := guest(t)
	tests := []struct {
		name  string
		from  int
		alloc func(node int) ([]byte, error)
	}{
		{"mbind", 1, allocMbind},
		{"set_mempolicy", l.lastNode(), allocThreadPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf, err := tt.alloc(tt.from)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Munmap(buf)
			addrs := pageAddrs(uintptr(unsafe.Pointer(&buf[0])), len(buf))
			waitOnNode(t, 0, addrs, tt.from)

			status, err := movePages(0, addrs, 0)
			if err != nil {
				t.Fatal(err)
			}
			h := histogram(status)
			t.Logf("move_pages %d pages node %d -> 0: per-node result %v (EBUSY: %d)",
				len(addrs), tt.from, h, h[-int(syscall.EBUSY)])
			waitOnNode(t, 0, addrs, 0)
		})
	}
}

// allocMbind binds a fresh mapping to node before its first touch.
func allocMbind(node int) ([]byte, error) {
	buf, err := unix.Mmap(-1, 0, regionSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	if err := mbind(buf, mpolBind, node); err != nil {
		unix.Munmap(buf)
		return nil, err
	}
	touch(buf)
	return buf, nil
}

// allocThreadPolicy touches a mapping from a thread whose own policy binds it
// to node; the thread is locked so the policy and the page faults meet.
func allocThreadPolicy(node int) ([]byte, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := setMempolicy(mpolBind, node); err != nil {
		return nil, err
	}
	buf, err := mapTouched(regionSize)
	if rerr := setMempolicy(mpolDefault); rerr != nil && err == nil {
		err = rerr
	}
	return buf, err
}
