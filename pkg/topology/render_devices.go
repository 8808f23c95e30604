package topology

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"
)

// writeDevices lists the devices under the node each hangs off, then those
// whose node is unknown. Functions of kind "other" (bridges, host bridges,
// SMBus and the like, dozens on a server) are counted, not listed: the
// JSON has them all. A device some workload holds ends with "held by" and
// their names.
func writeDevices(buf *bytes.Buffer, t *Topology, heldBy map[string][]string) error {
	if len(t.Devices) == 0 {
		return nil
	}
	buf.WriteString("\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	for _, n := range t.Nodes {
		if devs := t.DevicesOn(n.ID); len(devs) > 0 {
			fmt.Fprintf(tw, "node %d devices:\n", n.ID)
			listDevices(tw, devs, heldBy)
		}
	}
	if devs := t.DevicesOn(NUMAUnknown); len(devs) > 0 {
		fmt.Fprintf(tw, "devices of unknown node (numa_node -1%s):\n", UnknownNodeMeaning(t))
		listDevices(tw, devs, heldBy)
	}
	return tw.Flush()
}

func listDevices(tw *tabwriter.Writer, devs []PCIDevice, heldBy map[string][]string) {
	other := 0
	for _, d := range devs {
		kind := d.Kind()
		if kind == "other" {
			other++
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t%04x:%04x\tclass %06x", d.Address, kind, d.Vendor, d.Device, d.Class)
		if hs := heldBy[d.Address]; len(hs) > 0 {
			fmt.Fprintf(tw, "\theld by %s", strings.Join(hs, ", "))
		}
		fmt.Fprintln(tw)
	}
	if other > 0 {
		fmt.Fprintf(tw, "  %s\n", plural(other, "other function"))
	}
}

// UnknownNodeMeaning says what a device of unknown node means on t, after
// "numa_node -1": on one node every CPU is near it, on several Locus cannot
// tell which are.
func UnknownNodeMeaning(t *Topology) string {
	if len(t.Nodes) > 1 {
		return ": CPUs cannot be placed near them"
	}
	return "; one node: every CPU is near them"
}
