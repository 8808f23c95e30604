package topology

import (
	"fmt"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// The names of bus/pci/devices and the hex attributes in each are read from
// a tree a --sysfs-root may fill with anything, and addresses come from
// users (`locus plan --near-device`, the HostConfig).

// FuzzPCIAddress: what is accepted is canonical, and canonical is a fixed
// point of ParsePCIAddress.
func FuzzPCIAddress(f *testing.F) {
	for _, s := range []string{"0000:3b:00.0", "3B:00.7", "10000:00:00.0", "0000:00:1f.7", "0000:00:20.0",
		"0000:00:00.8", "00000:00:00.0", "ffffffff:ff:1f.7", "123456789:00:00.0", "0000:3b:00", ":::."} {
		f.Add(s)
	}
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, s string) {
		var canon string
		var err error
		fuzzseed.Timed(t, "ParsePCIAddress", func() { canon, err = ParsePCIAddress(s) })
		fuzzseed.CheckError(t, err, "pci address")
		if strictErr := CheckPCIAddress(s); strictErr == nil && (err != nil || canon != s) {
			t.Fatalf("canonical %q parses to %q, %v", s, canon, err)
		}
		if err != nil {
			return
		}
		if err := CheckPCIAddress(canon); err != nil {
			t.Fatalf("ParsePCIAddress(%q) = %q, not canonical: %v", s, canon, err)
		}
		if len(canon) > 8+len(":bb:dd.f") {
			t.Fatalf("ParsePCIAddress(%q) = %q: too long", s, canon)
		}
	})
}

// FuzzSysfsHex: what is accepted is exactly what the kernel would print.
func FuzzSysfsHex(f *testing.F) {
	for _, s := range []string{"0x030200", "0x10de", "0xFFFF", "0x", "10de", "0x-1de", "0x+10d", " 0x10de"} {
		f.Add(s, 4)
		f.Add(s, 6)
	}
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add(s, 4)
	}
	f.Fuzz(func(t *testing.T, s string, digits int) {
		digits = min(max(digits, 1), 8)
		var v uint32
		var err error
		fuzzseed.Timed(t, "parseSysfsHex", func() { v, err = parseSysfsHex(s, digits) })
		fuzzseed.CheckError(t, err, "hex digits")
		if err != nil {
			return
		}
		if back := fmt.Sprintf("0x%0*x", digits, v); len(back) != len(s) || v >= 1<<(4*digits) && digits < 8 {
			t.Fatalf("parseSysfsHex(%q, %d) = %#x, which prints as %q", s, digits, v, back)
		}
	})
}
