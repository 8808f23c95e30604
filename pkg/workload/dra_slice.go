package workload

import (
	"fmt"
	"sort"
	"strings"

	resourceapi "k8s.io/api/resource/v1beta1"

	"github.com/locus-project/locus/pkg/topology"
)

// Bounds of what the agent reads of Dynamic Resource Allocation's objects.
// The API server holds its objects to smaller ones (128 devices a slice, 32
// attributes a device, 64-byte values), but an object is read as it comes:
// another server, or a newer one, may send more.
const (
	// MaxSliceDevices is the most devices one ResourceSlice may publish.
	MaxSliceDevices = 128
	// MaxDeviceAttributes is the most attributes one device may carry.
	MaxDeviceAttributes = 64
	// MaxSliceAttributes is the most attributes of all a slice's devices
	// together.
	MaxSliceAttributes = 2048
	// MaxDRANameLen bounds a driver's, pool's, device's or attribute's name
	// (a DNS subdomain's length).
	MaxDRANameLen = 253
	// MaxDRAValueLen bounds a string attribute's value.
	MaxDRAValueLen = 256
)

// The device attributes the agent reads a device's place from. A name
// without a domain is in the driver's own domain, as the API defines it; the
// same identifier under the driver's domain or the Kubernetes domain is
// read alike.
const (
	// AttributePCIBusID (and the identifier pciAddress) is the device's PCI
	// address, "[domain:]bus:device.function" in hex, mapped to its NUMA
	// node through the machine's PCI devices.
	AttributePCIBusID = "resource.kubernetes.io/pciBusID"
	// AttributeNUMANode (int) is the NUMA node the device hangs off, for a
	// driver that says so itself.
	AttributeNUMANode = "numaNode"
)

var (
	pciIDs  = []string{"pciBusID", "pciAddress"}
	numaIDs = []string{"numaNode"}
)

// DRADevice names one device of Dynamic Resource Allocation as a claim's
// allocation names it: driver, pool, device.
type DRADevice struct {
	Driver, Pool, Device string
}

// String is driver/pool/device, as kubectl prints an allocation.
func (d DRADevice) String() string { return d.Driver + "/" + d.Pool + "/" + d.Device }

// DRAPlace is where a published device hangs off: its canonical PCI
// address (empty when the driver publishes none) and its NUMA node as the
// driver publishes it (topology.NUMAUnknown when it does not).
type DRAPlace struct {
	PCI  string
	NUMA int
}

// ParseResourceSlice reads the devices a ResourceSlice publishes and the
// place of each, from the attributes named above. A slice over any bound,
// or whose place attributes cannot be read, is refused whole with an error
// naming the field and the value: a driver that publishes absurd text is
// not believed on any of its devices. Devices that publish no place are
// kept with an empty one.
func ParseResourceSlice(s *resourceapi.ResourceSlice) (map[DRADevice]DRAPlace, error) {
	driver, pool := s.Spec.Driver, s.Spec.Pool.Name
	if err := checkDRAName("spec.driver", driver); err != nil {
		return nil, err
	}
	if err := checkDRAName("spec.pool.name", pool); err != nil {
		return nil, err
	}
	if n := len(s.Spec.Devices); n > MaxSliceDevices {
		return nil, fmt.Errorf("spec.devices: %d devices, at most %d", n, MaxSliceDevices)
	}
	total := 0
	for i, d := range s.Spec.Devices {
		if d.Basic != nil {
			total += len(d.Basic.Attributes)
			if n := len(d.Basic.Attributes); n > MaxDeviceAttributes {
				return nil, fmt.Errorf("spec.devices[%d].basic.attributes: %d attributes, at most %d", i, n, MaxDeviceAttributes)
			}
		}
	}
	if total > MaxSliceAttributes {
		return nil, fmt.Errorf("spec.devices[*].basic.attributes: %d attributes in all, at most %d", total, MaxSliceAttributes)
	}
	out := make(map[DRADevice]DRAPlace, len(s.Spec.Devices))
	for i, d := range s.Spec.Devices {
		field := fmt.Sprintf("spec.devices[%d]", i)
		if err := checkDRAName(field+".name", d.Name); err != nil {
			return nil, err
		}
		key := DRADevice{Driver: driver, Pool: pool, Device: d.Name}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("%s.name: %s is published twice", field, topology.Quote(d.Name))
		}
		place := DRAPlace{NUMA: topology.NUMAUnknown}
		if d.Basic != nil {
			var err error
			if place, err = placeOf(field+".basic.attributes", driver, d.Basic.Attributes); err != nil {
				return nil, err
			}
		}
		out[key] = place
	}
	return out, nil
}

// placeOf reads a device's place from its attributes, in a fixed order of
// names so that the same attributes always give the same answer.
func placeOf(field, driver string, attrs map[resourceapi.QualifiedName]resourceapi.DeviceAttribute) (DRAPlace, error) {
	place := DRAPlace{NUMA: topology.NUMAUnknown}
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		if len(name) > MaxDRANameLen {
			return place, fmt.Errorf("%s: a name of %d bytes, at most %d", field, len(name), MaxDRANameLen)
		}
		names = append(names, string(name))
	}
	sort.Strings(names)
	for _, name := range names {
		a := attrs[resourceapi.QualifiedName(name)]
		f := field + "[" + topology.Quote(name) + "]"
		if a.StringValue != nil && len(*a.StringValue) > MaxDRAValueLen {
			return place, fmt.Errorf("%s: a string of %d bytes, at most %d", f, len(*a.StringValue), MaxDRAValueLen)
		}
		switch {
		case placeAttribute(name, driver, pciIDs):
			if a.StringValue == nil {
				return place, fmt.Errorf("%s: want a string PCI address", f)
			}
			addr, err := topology.ParsePCIAddress(*a.StringValue)
			if err != nil {
				return place, fmt.Errorf("%s: %w", f, err)
			}
			if place.PCI != "" && place.PCI != addr {
				return place, fmt.Errorf("%s: %s, but another attribute says %s", f, addr, place.PCI)
			}
			place.PCI = addr
		case placeAttribute(name, driver, numaIDs):
			if a.IntValue == nil || *a.IntValue < 0 || *a.IntValue > topology.MaxNodeID {
				return place, fmt.Errorf("%s: want an int NUMA node from 0 to %d, got %s", f, topology.MaxNodeID, attributeText(a))
			}
			n := int(*a.IntValue)
			if place.NUMA != topology.NUMAUnknown && place.NUMA != n {
				return place, fmt.Errorf("%s: node %d, but another attribute says %d", f, n, place.NUMA)
			}
			place.NUMA = n
		}
	}
	return place, nil
}

// placeAttribute is whether name is one of ids, without a domain (the
// driver's), under the driver's domain, or under the Kubernetes domain.
func placeAttribute(name, driver string, ids []string) bool {
	domain, id, qualified := strings.Cut(name, "/")
	if !qualified {
		domain, id = "", name
	}
	if domain != "" && domain != driver && domain != "resource.kubernetes.io" {
		return false
	}
	for _, want := range ids {
		if id == want {
			return true
		}
	}
	return false
}

func attributeText(a resourceapi.DeviceAttribute) string {
	switch {
	case a.IntValue != nil:
		return fmt.Sprint(*a.IntValue)
	case a.StringValue != nil:
		return "string " + topology.Quote(*a.StringValue)
	case a.BoolValue != nil:
		return fmt.Sprint("bool ", *a.BoolValue)
	case a.VersionValue != nil:
		return "version " + topology.Quote(*a.VersionValue)
	}
	return "no value"
}

func checkDRAName(field, s string) error {
	if s == "" || len(s) > MaxDRANameLen {
		return fmt.Errorf("%s: %d bytes, want 1 to %d", field, len(s), MaxDRANameLen)
	}
	return nil
}
