package view

import (
	"fmt"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// deviceLines are a node's PCI devices, one line each under its memory
// (the "other" functions, bridges and the like, counted in one line), so
// a device shows on the node its DMA reaches without a hop.
func deviceLines(devs []topology.PCIDevice, holders map[string][]string) []nodeLine {
	var out []nodeLine
	other := 0
	for _, d := range devs {
		if d.Kind() == "other" {
			other++
			continue
		}
		text := fmt.Sprintf("%s %s %04x:%04x", d.Kind(), d.Address, d.Vendor, d.Device)
		if hs := holders[d.Address]; len(hs) > 0 {
			text += " held by " + strings.Join(hs, ", ")
		}
		out = append(out, nodeLine{class: "device", address: d.Address, text: text})
	}
	if other > 0 {
		out = append(out, nodeLine{class: "device-other", text: plural(other, "other PCI function")})
	}
	return out
}

// unknownDevices draws the devices whose node the firmware does not report
// under the machine, and returns the height drawn (0 for none).
func (d *svgDrawer) unknownDevices(x, y int) (w, h int) {
	lines := deviceLines(d.s.Topology.DevicesOn(topology.NUMAUnknown), d.s.DeviceHolders())
	if len(lines) == 0 {
		return 0, 0
	}
	head := "devices of unknown node (numa_node -1" + topology.UnknownNodeMeaning(d.s.Topology) + ")"
	fmt.Fprintf(&d.b, `<g class="devices-unknown" transform="translate(%d,%d)"><text x="0" y="12">%s</text>`+"\n", x, y, esc(head))
	w = len(head) * charWidth
	for i, l := range lines {
		fmt.Fprintf(&d.b, `<text class="dim %s"%s x="0" y="%d">%s</text>`+"\n", l.class, l.attrs(), 12+(i+1)*lineH, esc(l.text))
		w = max(w, len(l.text)*charWidth)
	}
	d.b.WriteString("</g>\n")
	return w, 12 + len(lines)*lineH + 4
}

// attrs are the data-* attributes of a line: a huge page pool's size, a
// device's address.
func (l nodeLine) attrs() string {
	switch {
	case l.sizeKiB > 0:
		return fmt.Sprintf(` data-size-kib="%d"`, l.sizeKiB)
	case l.address != "":
		return fmt.Sprintf(` data-pci="%s"`, esc(l.address))
	}
	return ""
}
