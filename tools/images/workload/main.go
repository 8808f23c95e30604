// Command workload is the end-to-end tests' container process: it allocates and
// touches the memory asked for, optionally starts child processes (so tests can check
// every process of a container), then sleeps until SIGTERM. It never spins: the
// node it runs on is shared.
//
// Its first output line, written before anything else, is what the process saw
// at its first instruction: the CPUs and NUMA nodes it may use, the CPUs its
// runtime sized itself for, and its cgroup's memory QoS files, so tests can tell
// a container created pinned from one pinned after it started:
//
//	first: cpus=2 mems=0 nproc=1 memory.min=0 memory.low=0 memory.high=max ...
//
//	workload [-mem 64Mi] [-children N]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	fmt.Println(firstLine())
	mem := flag.String("mem", "0", "memory to allocate and touch: bytes, or with a Ki/Mi/Gi suffix")
	children := flag.Int("children", 0, "child processes to start (each a sleeping workload)")
	flag.Parse()
	n, err := parseBytes(*mem)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(2)
	}
	held := make([]byte, n)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1 // touch every page so it is charged to the cgroup
	}
	var procs []*exec.Cmd
	for range *children {
		c := exec.Command("/proc/self/exe")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "workload:", err)
			os.Exit(1)
		}
		procs = append(procs, c)
	}
	fmt.Printf("workload: pid %d holds %d bytes, %d children\n", os.Getpid(), len(held), len(procs))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	for _, c := range procs {
		_ = c.Process.Signal(syscall.SIGTERM)
		_ = c.Wait()
	}
	_ = held[len(held)/2:] // keep the memory reachable until the end
}

// firstLine reports what the process sees now. A file it cannot read is
// shown as "-": which ones exist depends on the cgroup version.
func firstLine() string {
	status, _ := os.ReadFile("/proc/self/status")
	field := func(name string) string {
		for _, l := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				return strings.TrimSpace(v)
			}
		}
		return "-"
	}
	parts := []string{"first:", "cpus=" + field("Cpus_allowed_list"), "mems=" + field("Mems_allowed_list"),
		"nproc=" + strconv.Itoa(runtime.NumCPU())}
	// The container's own cgroup is mounted at /sys/fs/cgroup (v2) or
	// /sys/fs/cgroup/memory (v1).
	for _, f := range []string{"memory.min", "memory.low", "memory.high", "memory.soft_limit_in_bytes"} {
		v := "-"
		for _, dir := range []string{"/sys/fs/cgroup/", "/sys/fs/cgroup/memory/"} {
			if b, err := os.ReadFile(dir + f); err == nil {
				v = strings.TrimSpace(string(b))
				break
			}
		}
		parts = append(parts, f+"="+v)
	}
	return strings.Join(parts, " ")
}

func parseBytes(s string) (int, error) {
	mult := 1
	for suffix, m := range map[string]int{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
			break
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("-mem %q is not a size such as 64Mi", s)
	}
	return v * mult, nil
}
