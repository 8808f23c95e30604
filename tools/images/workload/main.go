// Command workload is the end-to-end tests' container process: it allocates and
// touches the memory asked for, optionally starts child processes (so tests can check
// every process of a container), then sleeps until SIGTERM. It never spins: the
// node it runs on is shared.
//
//	workload [-mem 64Mi] [-children N]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

func main() {
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
