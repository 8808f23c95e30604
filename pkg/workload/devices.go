package workload

import (
	"fmt"

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
// given. The address grammar is the machine model's (topology.ParsePCIAddress),
// so what a workload names is what discovery finds.
func ParseDevices(field string, raw []string) ([]string, error) {
	if len(raw) > MaxDevices {
		return nil, fmt.Errorf("%s: %d devices, at most %d", field, len(raw), MaxDevices)
	}
	if len(raw) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(raw))
	for i, s := range raw {
		addr, err := topology.ParsePCIAddress(s)
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
