package nrt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// AttributePCIDevices is the zone attribute listing the PCI functions
// attached to the zone's NUMA node, so a scheduler can put a pod's CPUs on
// the node of its devices.
const AttributePCIDevices = "locus.io/pci-devices"

// MaxPCIDevicesValue bounds the attribute's value. When the addresses do
// not all fit, the value holds those that do, then "+N" for the N left out,
// so a reader knows the list is not whole.
const MaxPCIDevicesValue = 8 << 10

// pciDevicesAttribute lists node's devices in address order, comma
// separated, leaving out bridges and system peripherals (class 06xxxx and
// 08xxxx: the kernel's own plumbing, never given to a pod, and on a large
// server most of the functions). ok=false when there is nothing to list.
func pciDevicesAttribute(t *topology.Topology, node int) (Attribute, bool) {
	var addrs []string
	for _, d := range t.DevicesOn(node) {
		if base := d.Class >> 16; base != 0x06 && base != 0x08 {
			addrs = append(addrs, d.Address)
		}
	}
	if len(addrs) == 0 {
		return Attribute{}, false
	}
	return Attribute{Name: AttributePCIDevices, Value: joinBounded(addrs, MaxPCIDevicesValue)}, true
}

// joinBounded joins addrs with commas in at most limit bytes. Each
// address is written only with room left for the "+N" marker that would
// follow it, so the marker always fits.
func joinBounded(addrs []string, limit int) string {
	var b strings.Builder
	for i, a := range addrs {
		sep := ","
		if i == 0 {
			sep = ""
		}
		need := len(sep) + len(a)
		if left := len(addrs) - i - 1; left > 0 {
			need += len(",+") + len(strconv.Itoa(left))
		}
		if b.Len()+need > limit {
			b.WriteString(sep + "+" + strconv.Itoa(len(addrs)-i))
			break
		}
		b.WriteString(sep + a)
	}
	return b.String()
}

// ReadPCIDevices reads a zone's AttributePCIDevices: the canonical
// addresses listed and how many were left out ("+N"). A zone without the
// attribute has none. At most MaxPCIDevicesValue bytes are read; every
// address must be canonical and in increasing order.
func ReadPCIDevices(z Zone) (addrs []string, more int, err error) {
	var value string
	for _, a := range z.Attributes {
		if a.Name == AttributePCIDevices {
			value = a.Value
			break
		}
	}
	if value == "" {
		return nil, 0, nil
	}
	field := fmt.Sprintf("zone %s: attribute %s", topology.Quote(z.Name), AttributePCIDevices)
	if len(value) > MaxPCIDevicesValue {
		return nil, 0, fmt.Errorf("%s: %d bytes, more than %d", field, len(value), MaxPCIDevicesValue)
	}
	parts := strings.Split(value, ",")
	if last := parts[len(parts)-1]; strings.HasPrefix(last, "+") {
		n, err := strconv.Atoi(last[1:])
		if err != nil || n < 1 || n > topology.MaxPCIDevices {
			return nil, 0, fmt.Errorf("%s: %s is not +1 to +%d", field, topology.Quote(last), topology.MaxPCIDevices)
		}
		more, parts = n, parts[:len(parts)-1]
	}
	for i, p := range parts {
		if err := topology.CheckPCIAddress(p); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", field, err)
		}
		if i > 0 && p <= parts[i-1] {
			return nil, 0, fmt.Errorf("%s: %s not in increasing order", field, p)
		}
	}
	return parts, more, nil
}
