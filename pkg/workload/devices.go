package workload

import (
	"fmt"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// MaxDevices bounds the PCI devices one workload may name: a workload holds
// a few GPUs and NICs, and every one is looked up at every decision.
const MaxDevices = 16

// ReasonInvalidDevices is the problem of a workload whose devices cannot be
// read: it runs in the shared pool, as a workload whose other requests
// cannot be read does, rather than on CPUs chosen without its devices.
const ReasonInvalidDevices = "InvalidDevices"

// ParseDevices reads the PCI addresses a workload holds, as its text gives
// them (field names the list in errors: "devices"): at most MaxDevices,
// each once, every one "[domain:]bus:device.function" in hex, returned in
// the canonical form sysfs names devices by (0000:3b:00.0), in the order
// given.
func ParseDevices(field string, raw []string) ([]string, error) {
	if len(raw) > MaxDevices {
		return nil, fmt.Errorf("%s: %d devices, at most %d", field, len(raw), MaxDevices)
	}
	if len(raw) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(raw))
	for i, s := range raw {
		addr, err := pciAddress(s)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		for j, seen := range out {
			if seen == addr {
				return nil, fmt.Errorf("%s[%d]: %s is %s[%d] again", field, i, topology.Quote(s), field, j)
			}
		}
		out = append(out, addr)
	}
	return out, nil
}

// maxDomainDigits bounds a PCI domain: the kernel's is 32 bits, printed as
// at least four hex digits.
const maxDomainDigits = 8

// pciAddress reads a PCI address with or without its domain, in either
// case ("3b:00.0", "0000:3B:00.0"), into the form Linux names
// /sys/bus/pci/devices entries by ("%04x:%02x:%02x.%d": 0000:3b:00.0).
func pciAddress(s string) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("PCI address %s: %s; want [domain:]bus:device.function, e.g. 0000:3b:00.0", topology.Quote(s), why)
	}
	if len(s) > maxDomainDigits+8 {
		return "", bad("too long")
	}
	addr := strings.ToLower(s)
	if strings.Count(addr, ":") == 1 {
		addr = "0000:" + addr
	}
	domain, rest, _ := strings.Cut(addr, ":")
	if domain == "" {
		return "", bad("no domain before the first ':'")
	}
	domain = strings.TrimLeft(domain, "0")
	if len(domain) < 4 {
		domain = strings.Repeat("0", 4-len(domain)) + domain
	}
	if len(domain) > maxDomainDigits || !isHex(domain) {
		return "", bad(fmt.Sprintf("the domain is not 1-%d hex digits", maxDomainDigits))
	}
	// bus:device.function is exactly bb:dd.f.
	if len(rest) != 7 || rest[2] != ':' || rest[5] != '.' || !isHex(rest[0:2]) || !isHex(rest[3:5]) {
		return "", bad("want two hex digits of bus, two of device and a function")
	}
	if rest[3] > '1' {
		return "", bad("the device is above 1f")
	}
	if f := rest[6]; f < '0' || f > '7' {
		return "", bad("the function is not 0-7")
	}
	return domain + ":" + rest, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}
