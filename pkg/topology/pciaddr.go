package topology

import (
	"fmt"
	"strings"
)

// The PCI address grammar and the hex attributes of a device directory.
// Linux names a function "%04x:%02x:%02x.%d" (pci_name): a domain of at
// least four lowercase hex digits (VMD domains start at 0x10000), a bus, a
// device below 0x20 and a function of 0-7.

// maxDomainDigits bounds the domain: the kernel's domain is 32 bits.
const maxDomainDigits = 8

// ParsePCIAddress reads a PCI address as people write it, with or without
// the domain ("3b:00.0", "0000:3B:00.0"), and returns its canonical form
// ("0000:3b:00.0"), or an error naming the address.
func ParsePCIAddress(s string) (string, error) {
	addr := strings.ToLower(s)
	if strings.Count(addr, ":") == 1 {
		addr = "0000:" + addr
	}
	if err := CheckPCIAddress(addr); err != nil {
		return "", fmt.Errorf("pci address %s: want [domain:]bus:device.function, e.g. 0000:3b:00.0", Quote(s))
	}
	return addr, nil
}

// CheckPCIAddress accepts exactly the canonical form Linux names
// bus/pci/devices entries by, and nothing else.
func CheckPCIAddress(s string) error {
	domain, rest, ok := strings.Cut(s, ":")
	if !ok || len(domain) < 4 || len(domain) > maxDomainDigits || !lowerHex(domain) ||
		(len(domain) > 4 && domain[0] == '0') {
		return fmt.Errorf("pci address %s: domain is not 4-%d lowercase hex digits", Quote(s), maxDomainDigits)
	}
	// bb:dd.f is exactly 7 bytes.
	if len(rest) != 7 || rest[2] != ':' || rest[5] != '.' || !lowerHex(rest[0:2]) || !lowerHex(rest[3:5]) {
		return fmt.Errorf("pci address %s: want bb:dd.f after the domain", Quote(s))
	}
	if rest[3] > '1' {
		return fmt.Errorf("pci address %s: device above 1f", Quote(s))
	}
	if f := rest[6]; f < '0' || f > '7' {
		return fmt.Errorf("pci address %s: function is not 0-7", Quote(s))
	}
	return nil
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// parseSysfsHex reads a sysfs hex attribute as the kernel prints it: "0x"
// and exactly digits hex digits ("0x030200" for a class, "0x10de" for a
// vendor). Nothing else is accepted: a value that is not the kernel's is
// not guessed at.
func parseSysfsHex(s string, digits int) (uint32, error) {
	if len(s) != 2+digits || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return 0, fmt.Errorf("%s is not 0x and %d hex digits", Quote(s), digits)
	}
	var v uint32
	for i := 2; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, fmt.Errorf("%s is not 0x and %d hex digits", Quote(s), digits)
		}
		v = v<<4 | uint32(c)
	}
	return v, nil
}

// Kind is a device's class in a word, for the views: "gpu", "nic", "nvme",
// "accelerator" or "other".
func (d PCIDevice) Kind() string {
	base, sub := d.Class>>16, d.Class>>8&0xff
	switch {
	case base == 0x03 && (sub == 0x00 || sub == 0x02):
		return "gpu" // VGA-compatible or 3D controller
	case base == 0x02:
		return "nic"
	case base == 0x01 && sub == 0x08:
		return "nvme" // non-volatile memory controller
	case base == 0x12:
		return "accelerator" // processing accelerator
	}
	return "other"
}
