package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/topology"
)

// nodeFacts is what `numactl -H` prints for one node, read from sysfs.
type nodeFacts struct {
	id              int
	cpus            string // "0 1"
	totalMB, freeMB uint64
	distances       []string
}

// printBanner prints the kernel, the settings and the NUMA layout, so a console
// log alone tells what machine the tests saw.
func printBanner(w io.Writer, cfg config) {
	var u unix.Utsname
	_ = unix.Uname(&u)
	balancing := "unknown"
	if b, err := os.ReadFile("/proc/sys/kernel/numa_balancing"); err == nil {
		balancing = strings.TrimSpace(string(b))
	}
	fmt.Fprintf(w, "NUMAVM: kernel %s, cgroup %s, numa_balancing %s\n",
		unix.ByteSliceToString(u.Release[:]), cfg.cgroup, balancing)
	fmt.Fprintf(w, "NUMAVM: test args %s\n", strings.Join(cfg.args, " "))
	online, nodes, err := readNodes("/sys")
	if err != nil {
		fmt.Fprintf(w, "NUMAVM: no NUMA facts: %v\n", err)
		return
	}
	writeNodes(w, online, nodes)
}

// readNodes reads the online node list and each node's CPUs, memory and
// distances under sysRoot/devices/system/node.
func readNodes(sysRoot string) (string, []nodeFacts, error) {
	dir := filepath.Join(sysRoot, "devices", "system", "node")
	b, err := os.ReadFile(filepath.Join(dir, "online"))
	if err != nil {
		return "", nil, err
	}
	online := strings.TrimSpace(string(b))
	ids, err := topology.ParseCPUList(online)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", filepath.Join(dir, "online"), err)
	}
	var out []nodeFacts
	for _, id := range ids.List() {
		n, err := readNode(filepath.Join(dir, "node"+strconv.Itoa(id)), id)
		if err != nil {
			return "", nil, err
		}
		out = append(out, n)
	}
	return online, out, nil
}

func readNode(dir string, id int) (nodeFacts, error) {
	n := nodeFacts{id: id}
	b, err := os.ReadFile(filepath.Join(dir, "cpulist"))
	if err != nil {
		return n, err
	}
	cpus, err := topology.ParseCPUList(strings.TrimSpace(string(b)))
	if err != nil {
		return n, fmt.Errorf("%s/cpulist: %w", dir, err)
	}
	n.cpus = strings.Trim(fmt.Sprint(cpus.List()), "[]")
	if b, err = os.ReadFile(filepath.Join(dir, "distance")); err != nil {
		return n, err
	}
	n.distances = strings.Fields(string(b))
	n.totalMB, n.freeMB, err = readMeminfo(filepath.Join(dir, "meminfo"))
	return n, err
}

// readMeminfo reads "Node N MemTotal: X kB" and "Node N MemFree: X kB".
func readMeminfo(path string) (total, free uint64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 {
			continue
		}
		kb, perr := strconv.ParseUint(fields[3], 10, 64)
		if perr != nil {
			continue
		}
		switch fields[2] {
		case "MemTotal:":
			total = kb / 1024
		case "MemFree:":
			free = kb / 1024
		}
	}
	return total, free, sc.Err()
}

// writeNodes prints the facts in the layout of `numactl -H`.
func writeNodes(w io.Writer, online string, nodes []nodeFacts) {
	fmt.Fprintf(w, "available: %d nodes (%s)\n", len(nodes), online)
	for _, n := range nodes {
		fmt.Fprintf(w, "node %d cpus: %s\n", n.id, n.cpus)
		fmt.Fprintf(w, "node %d size: %d MB\n", n.id, n.totalMB)
		fmt.Fprintf(w, "node %d free: %d MB\n", n.id, n.freeMB)
	}
	fmt.Fprintln(w, "node distances:")
	fmt.Fprint(w, "node ")
	for _, n := range nodes {
		fmt.Fprintf(w, "%4d", n.id)
	}
	fmt.Fprintln(w)
	for _, n := range nodes {
		fmt.Fprintf(w, "%4d:", n.id)
		for _, d := range n.distances {
			fmt.Fprintf(w, "%4s", d)
		}
		fmt.Fprintln(w)
	}
}
