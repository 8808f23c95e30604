package topology_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// gpuDir is where the GPU of fixture.GPUNIC lives, the target of its
// bus/pci/devices symlink.
const gpuDir = "devices/pci0000:af/0000:af:00.0"

func TestDiscoverDevices(t *testing.T) {
	root, _ := tree(t, fixture.GPUNIC)
	top, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range top.Devices {
		got = append(got, fmt.Sprintf("%s %06x %04x:%04x node %d cpus %s", d.Address, d.Class, d.Vendor, d.Device, d.NUMA, d.LocalCPUs))
	}
	want := []string{
		"0000:18:00.0 020000 8086:159b node 0 cpus 0-15,32-47",
		"0000:5e:00.0 010802 144d:a80a node 0 cpus 0-15,32-47",
		"0000:af:00.0 030200 10de:20b5 node 1 cpus 16-31,48-63",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("devices\n got %q\nwant %q", got, want)
	}
	if gpus := top.DevicesOn(1); len(gpus) != 1 || gpus[0].Kind() != "gpu" {
		t.Errorf("node 1 devices %+v, want the GPU", gpus)
	}
	if link, err := os.Readlink(filepath.Join(root, "bus/pci/devices/0000:af:00.0")); err != nil ||
		link != "../../../"+gpuDir {
		t.Errorf("bus/pci/devices entry: %q, %v: want a symlink into devices/ as Linux has", link, err)
	}
}

// A numa_node of -1 is unknown, whatever CPUs local_cpulist names; a node
// the machine lacks is unknown too, and said so.
func TestScanPCIUnknownNodes(t *testing.T) {
	root, _ := tree(t, fixture.DeviceNodeUnknown)
	top, err := topology.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if gpu, ok := top.Device("0000:af:00.0"); !ok || gpu.NUMA != topology.NUMAUnknown || gpu.LocalCPUs.Size() != 64 {
		t.Fatalf("gpu %+v, found %v: want node -1 and every CPU local", gpu, ok)
	}
	edit(t, root, map[string]string{gpuDir + "/numa_node": "3\n"})
	scan, err := topology.ScanPCI(root, top)
	if err != nil {
		t.Fatal(err)
	}
	want := []topology.PCIOffMachine{{Address: "0000:af:00.0", Node: 3}}
	if !reflect.DeepEqual(scan.OffMachine, want) || scan.Devices[1].NUMA != topology.NUMAUnknown {
		t.Fatalf("off-machine %+v, gpu node %d: want %+v and unknown", scan.OffMachine, scan.Devices[1].NUMA, want)
	}
}

// Entries that are no canonical address are counted and left out; a
// machine without a PCI bus has no devices and is no error.
func TestScanPCISkipsWhatIsNoAddress(t *testing.T) {
	root, _ := tree(t, fixture.GPUNIC)
	top := fixture.MustBuild(fixture.GPUNIC)
	for _, name := range []string{"0000:AF:00.0", "af:00.0", "0000:af:20.0", "0000:af:00.8", "00000:af:00.0", "README"} {
		if err := os.Mkdir(filepath.Join(root, "bus/pci/devices", name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	scan, err := topology.ScanPCI(root, top)
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Devices) != 3 || scan.NotAddresses != 6 || len(scan.NotAddressExamples) != 3 {
		t.Fatalf("%d devices, %d skipped (%q): want 3 and 6 with 3 examples", len(scan.Devices), scan.NotAddresses, scan.NotAddressExamples)
	}
	if err := os.RemoveAll(filepath.Join(root, "bus")); err != nil {
		t.Fatal(err)
	}
	if scan, err := topology.ScanPCI(root, top); err != nil || len(scan.Devices) != 0 {
		t.Fatalf("no bus/pci: %+v, %v", scan, err)
	}
}

// Every broken device directory gives an error naming the file, at once.
func TestScanPCIErrorsNameTheFile(t *testing.T) {
	cases := []struct {
		name  string
		edits map[string]string
		want  string
	}{
		{"class not hex", map[string]string{gpuDir + "/class": "0x03020g\n"}, "0000:af:00.0/class: \"0x03020g\" is not 0x and 6 hex digits"},
		{"class without 0x", map[string]string{gpuDir + "/class": "030200\n"}, "0000:af:00.0/class"},
		{"vendor too long", map[string]string{gpuDir + "/vendor": "0x10de0\n"}, "0000:af:00.0/vendor"},
		{"device missing", map[string]string{gpuDir + "/device": gone}, "0000:af:00.0/device"},
		{"numa_node garbage", map[string]string{gpuDir + "/numa_node": "one\n"}, "0000:af:00.0/numa_node: \"one\" is not -1 or a node id"},
		{"numa_node below -1", map[string]string{gpuDir + "/numa_node": "-2\n"}, "numa_node: \"-2\""},
		{"numa_node absurd", map[string]string{gpuDir + "/numa_node": "99999999999\n"}, "numa_node"},
		{"local_cpulist garbage", map[string]string{gpuDir + "/local_cpulist": "0-x\n"}, "0000:af:00.0/local_cpulist"},
		{"local_cpulist huge", map[string]string{gpuDir + "/local_cpulist": strings.Repeat("0,", 40<<10)}, "local_cpulist: larger than 64 KiB"},
	}
	root, _ := tree(t, fixture.GPUNIC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			edit(t, root, c.edits)
			_, err := topology.Discover(root)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// A tree may put anything where an attribute belongs: a FIFO no one
// writes, an endless device, a symlink loop, a directory of too many
// entries. Each is an error in bounded time, never a hang.
func TestScanPCIHostileTrees(t *testing.T) {
	tiny := fixture.GPUNIC // the same devices on two CPUs: quick to write
	tiny.CoresPerSocket, tiny.ThreadsPerCore = 1, 1
	top := fixture.MustBuild(tiny)
	cases := []struct {
		name  string
		spoil func(t *testing.T, root string)
		want  string
	}{
		{"fifo", func(t *testing.T, root string) {
			replace(t, filepath.Join(root, gpuDir, "class"), func(p string) error { return syscall.Mkfifo(p, 0o644) })
		}, `class: "" is not 0x and 6 hex digits`},
		{"endless device", func(t *testing.T, root string) {
			replace(t, filepath.Join(root, gpuDir, "vendor"), func(p string) error { return os.Symlink("/dev/zero", p) })
		}, "vendor: larger than 64 KiB"},
		{"symlink loop", func(t *testing.T, root string) {
			entry := filepath.Join(root, "bus/pci/devices/0000:af:00.0")
			replace(t, entry, func(p string) error { return os.Symlink("0000:af:00.0", p) })
		}, "too many levels of symbolic links"},
		{"too many entries", func(t *testing.T, root string) {
			dir := filepath.Join(root, "bus/pci/devices")
			for i := 0; i < 1000; i++ {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("x%d", i)), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}, "bus/pci/devices: more than 600 entries"},
		{"too many devices", func(t *testing.T, root string) {
			dir := filepath.Join(root, "bus/pci/devices")
			for i := 0; i < 100; i++ {
				name := fmt.Sprintf("0001:%02x:%02x.%d", i>>8, i>>3&0x1f, i&7)
				if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}, "103 PCI functions, more than the 100 Locus reads"},
		// Every attribute is small, but together they are more than the budget.
		{"too many bytes", func(t *testing.T, root string) {
			replace(t, filepath.Join(root, gpuDir, "local_cpulist"), func(p string) error {
				return os.WriteFile(p, []byte(strings.Repeat(" ", 5000)+"0\n"), 0o644)
			})
		}, "0000:af:00.0/local_cpulist: the PCI device attributes read hold more than 4 KiB in all"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, _ := tree(t, tiny)
			c.spoil(t, root)
			start := time.Now()
			_, err := topology.ScanPCIWithin(root, top, 600, 100, 4<<10)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v", d)
			}
		})
	}
}

// replace removes path and makes something else there.
func replace(t *testing.T, path string, make func(string) error) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := make(path); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDiscover256Devices is BenchmarkDiscover256's machine with 256
// PCI functions over its 8 nodes, about what a two-socket server shows:
// the difference is what reading the devices costs each discovery.
func BenchmarkDiscover256Devices(b *testing.B) {
	s := fixture.AMDNPS4
	for i := 0; i < 256; i++ {
		s.Devices = append(s.Devices, fixture.Device{Address: fmt.Sprintf("0000:%02x:%02x.%d", i>>3, i>>3&0x1f, i&7),
			Class: fixture.ClassEthernet, Vendor: fixture.VendorIntel, Device: 0x159b, Node: i % 8})
	}
	root := b.TempDir()
	if err := fixture.WriteSysfs(s, root); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := topology.Discover(root); err != nil {
			b.Fatal(err)
		}
	}
}
