package topology

import "fmt"

// checkDevices holds Devices to what Device and DevicesOn rely on, and to
// what a placement may trust: at most MaxPCIDevices, canonical addresses in
// strictly increasing order, a node that exists or NUMAUnknown, and local
// CPUs among the machine's.
func (t *Topology) checkDevices() error {
	if len(t.Devices) == 0 {
		return nil
	}
	if len(t.Devices) > MaxPCIDevices {
		return fmt.Errorf("%d devices: more than %d", len(t.Devices), MaxPCIDevices)
	}
	cpus := t.CPUSet()
	for i, d := range t.Devices {
		if err := CheckPCIAddress(d.Address); err != nil {
			return fmt.Errorf("devices[%d].address: %w", i, err)
		}
		if i > 0 && d.Address <= t.Devices[i-1].Address {
			return fmt.Errorf("devices[%d].address: %s not sorted or duplicated", i, d.Address)
		}
		if d.Class > 0xffffff {
			return fmt.Errorf("devices[%d].class: %#x is more than 24 bits", i, d.Class)
		}
		if d.NUMA != NUMAUnknown && t.nodeIndex(d.NUMA) < 0 {
			return fmt.Errorf("devices[%d].numa: %d is no node of the machine (nor -1, unknown)", i, d.NUMA)
		}
		if !d.LocalCPUs.IsSubsetOf(cpus) {
			return fmt.Errorf("devices[%d]: local cpus %s are not all cpus of the machine", i, d.LocalCPUs)
		}
	}
	return nil
}
