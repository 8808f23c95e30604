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
// With -watch it then watches its CPU affinity for that long (every 10 ms for
// the first 10 s, then every 100 ms, so hundreds of containers watching do not
// load the node), and prints each change from what the first line showed,
// with the time since the process started, so tests can tell how long a
// container ran before its final cpuset:
//
//	cpus: +412ms 0
//
//	workload [-mem 64Mi] [-children N] [-watch 2m]
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
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/utils/cpuset"
)

// started is as close to the process's first instruction as Go allows.
var started = time.Now()

func main() {
	first, cpus := firstLine()
	fmt.Println(first)
	mem := flag.String("mem", "0", "memory to allocate and touch: bytes, or with a Ki/Mi/Gi suffix")
	children := flag.Int("children", 0, "child processes to start (each a sleeping workload)")
	watch := flag.Duration("watch", 0, "print each change of the CPU affinity for this long")
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
	if *watch > 0 {
		watchCPUs(*watch, cpus, sig)
	}
	<-sig
	for _, c := range procs {
		_ = c.Process.Signal(syscall.SIGTERM)
		_ = c.Wait()
	}
	_ = held[len(held)/2:] // keep the memory reachable until the end
}

// firstLine reports what the process sees now, and its CPUs alone. A file
// it cannot read is shown as "-": which ones exist depends on the cgroup
// version.
func firstLine() (line, cpus string) {
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
	return strings.Join(parts, " "), field("Cpus_allowed_list")
}

// watchCPUs prints the CPU affinity each time it changes from last (the
// first line's), until d after the start or a signal (put back for main).
func watchCPUs(d time.Duration, last string, sig chan os.Signal) {
	for time.Since(started) < d {
		every := 10 * time.Millisecond
		if time.Since(started) > 10*time.Second {
			every = 100 * time.Millisecond
		}
		select {
		case s := <-sig:
			sig <- s
			return
		case <-time.After(every):
		}
		if now := affinity(); now != last {
			fmt.Printf("cpus: +%dms %s\n", time.Since(started).Milliseconds(), now)
			last = now
		}
	}
}

// affinity is the calling thread's allowed CPUs as a list ("0-1,4"), or "-".
func affinity() string {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return "-"
	}
	var ids []int
	for id := range len(set) * 64 {
		if set.IsSet(id) {
			ids = append(ids, id)
		}
	}
	return cpuset.New(ids...).String()
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
