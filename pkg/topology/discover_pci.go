package topology

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"

	"k8s.io/utils/cpuset"
)

// PCIScan is what discovery found under bus/pci/devices, with what it left
// out, for `locus doctor` to tell.
type PCIScan struct {
	Devices []PCIDevice
	// NotAddresses counts the entries whose name is no canonical PCI
	// address (skipped); NotAddressExamples holds the first few.
	NotAddresses       int
	NotAddressExamples []string
	// OffMachine are the devices whose numa_node names a node this machine
	// does not have online (kept with NUMA NUMAUnknown): their node
	// holds neither CPUs nor memory, so no CPU can be near them.
	OffMachine []PCIOffMachine
}

// PCIOffMachine is a device whose numa_node names a node t lacks.
type PCIOffMachine struct {
	Address string
	Node    int
}

const maxExamples = 3

// ScanPCI reads the PCI functions of the machine t under
// sysfsRoot/bus/pci/devices, sorted by address. A machine without that
// directory has no devices. A numa_node of -1 is NUMAUnknown, and so is a
// node t does not have (reported in OffMachine rather than failing the
// whole discovery: a hidden node is the firmware's to fix, and the
// machine's CPUs are still worth managing). Every other malformed
// attribute is an error naming the file.
func ScanPCI(sysfsRoot string, t *Topology) (PCIScan, error) {
	return scanPCI(sysfsRoot, t, pciLimits{entries: maxPCIEntries, devices: MaxPCIDevices, bytes: maxPCITreeBytes})
}

// pciLimits are the caps of one scan; tests lower them to reach them with a
// few entries.
type pciLimits struct{ entries, devices, bytes int }

func scanPCI(sysfsRoot string, t *Topology, limits pciLimits) (PCIScan, error) {
	dir := filepath.Join(sysfsRoot, "bus", "pci", "devices")
	names, err := readDirNames(dir, limits.entries)
	if errors.Is(err, fs.ErrNotExist) {
		return PCIScan{}, nil
	}
	if err != nil {
		return PCIScan{}, err
	}
	var scan PCIScan
	var addrs []string
	for _, name := range names {
		if CheckPCIAddress(name) != nil {
			scan.NotAddresses++
			if len(scan.NotAddressExamples) < maxExamples {
				scan.NotAddressExamples = append(scan.NotAddressExamples, name)
			}
			continue
		}
		addrs = append(addrs, name)
	}
	if len(addrs) > limits.devices {
		return PCIScan{}, fmt.Errorf("%s: %d PCI functions, more than the %d Locus reads", dir, len(addrs), limits.devices)
	}
	sort.Strings(addrs)
	d := deviceReader{attrs: newAttrReader(limits.bytes), online: t.CPUSet(), lists: map[string]cpuset.CPUSet{},
		budget: NewCPUBudget((len(t.Nodes)+2)*len(t.CPUs), "a CPU list per NUMA node and two more")}
	if len(addrs) > 0 { // none stays nil, as a machine without the bus has
		scan.Devices = make([]PCIDevice, 0, len(addrs))
	}
	for _, addr := range addrs {
		dev, err := d.read(dir, addr)
		if err != nil {
			return PCIScan{}, err
		}
		if dev.NUMA != NUMAUnknown && t.nodeIndex(dev.NUMA) < 0 {
			scan.OffMachine = append(scan.OffMachine, PCIOffMachine{Address: addr, Node: dev.NUMA})
			dev.NUMA = NUMAUnknown
		}
		scan.Devices = append(scan.Devices, dev)
	}
	return scan, nil
}

// readDirNames lists dir, refusing it past limit entries having read at
// most one batch more.
func readDirNames(dir string, limit int) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	for {
		batch, err := f.Readdirnames(256)
		names = append(names, batch...)
		if len(names) > limit {
			return nil, fmt.Errorf("%s: more than %d entries", dir, limit)
		}
		if err == io.EOF {
			return names, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// deviceReader reads one function's directory. CPU lists repeat (every
// device of a node has the node's), so each distinct text is expanded once
// and charged to a budget sized from the machine, not from the tree.
type deviceReader struct {
	attrs  *attrReader
	dirfd  int    // the device directory being read
	dir    string // and its path, for errors
	online cpuset.CPUSet
	lists  map[string]cpuset.CPUSet
	budget *CPUBudget
}

// read reads the device addr of the directory bus, each attribute opened
// relative to the device's directory, opened once.
func (r *deviceReader) read(bus, addr string) (PCIDevice, error) {
	dev := PCIDevice{Address: addr, NUMA: NUMAUnknown, LocalCPUs: cpuset.New()}
	dir := filepath.Join(bus, addr)
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return dev, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(fd)
	r.dirfd, r.dir = fd, dir
	class, err := r.hex("class", 6)
	if err != nil {
		return dev, err
	}
	vendor, err := r.hex("vendor", 4)
	if err != nil {
		return dev, err
	}
	device, err := r.hex("device", 4)
	if err != nil {
		return dev, err
	}
	dev.Class, dev.Vendor, dev.Device = class, uint16(vendor), uint16(device)
	if dev.NUMA, err = r.node(); err != nil {
		return dev, err
	}
	if dev.LocalCPUs, err = r.cpus(); err != nil {
		return dev, err
	}
	return dev, nil
}

func (r *deviceReader) hex(name string, digits int) (uint32, error) {
	s, err := r.attrs.read(r.dirfd, r.dir, name)
	if err != nil {
		return 0, err
	}
	v, err := parseSysfsHex(s, digits)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", filepath.Join(r.dir, name), err)
	}
	return v, nil
}

// node reads numa_node; a kernel without NUMA support has none.
func (r *deviceReader) node() (int, error) {
	s, err := r.attrs.read(r.dirfd, r.dir, "numa_node")
	if errors.Is(err, fs.ErrNotExist) {
		return NUMAUnknown, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < NUMAUnknown || n > MaxNodeID {
		return 0, fmt.Errorf("%s: %s is not -1 or a node id 0-%d", filepath.Join(r.dir, "numa_node"), Quote(s), MaxNodeID)
	}
	return n, nil
}

// cpus reads local_cpulist, cut down to the online CPUs as node lists are;
// a kernel without NUMA support has none.
func (r *deviceReader) cpus() (cpuset.CPUSet, error) {
	path := filepath.Join(r.dir, "local_cpulist")
	s, err := r.attrs.read(r.dirfd, r.dir, "local_cpulist")
	if errors.Is(err, fs.ErrNotExist) {
		return cpuset.New(), nil
	}
	if err != nil {
		return cpuset.New(), err
	}
	if set, ok := r.lists[s]; ok {
		return set, nil
	}
	if _, err := r.budget.Charge(s); err != nil {
		return cpuset.New(), fmt.Errorf("%s: %w", path, err)
	}
	set, err := ParseCPUList(s)
	if err != nil {
		return cpuset.New(), fmt.Errorf("%s: %w", path, err)
	}
	set = set.Intersection(r.online)
	r.lists[s] = set
	return set, nil
}
