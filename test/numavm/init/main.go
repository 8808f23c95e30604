// Command init is PID 1 of the NUMA test guest. It mounts the kernel
// filesystems, prints the NUMA layout it finds, runs every test binary listed in
// /numavm/tests with -test.v, prints one machine-readable result line and
// powers the guest off. It never exits: PID 1 exiting panics the kernel.
package main

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Files run.sh writes into the initramfs.
const (
	testsFile = "/numavm/tests"
	envFile   = "/numavm/env"
	argsFile  = "/numavm/args"
)

func main() {
	start := time.Now()
	total, err := setupAndRun()
	if err != nil {
		fmt.Printf("NUMAVM-ERROR: %v\n", err)
		total.fail++
	}
	fmt.Printf("NUMAVM-RESULT: %s seconds=%.1f\n", total, time.Since(start).Seconds())
	powerOff()
}

func setupAndRun() (tally, error) {
	if os.Getpid() != 1 {
		return tally{}, fmt.Errorf("init must run as PID 1 inside the guest, not as pid %d", os.Getpid())
	}
	if err := mountBase(); err != nil {
		return tally{}, err
	}
	reopenConsole()
	if err := loopbackUp(); err != nil {
		return tally{}, err
	}
	cfg, err := readConfig()
	if err != nil {
		return tally{}, err
	}
	if err := mountCgroups(cfg.cgroup); err != nil {
		return tally{}, err
	}
	printBanner(os.Stdout, cfg)
	tests, err := readTests(testsFile)
	if err != nil {
		return tally{}, err
	}
	if tests, err = placeBinaries(tests); err != nil {
		return tally{}, err
	}
	return runAll(tests, cfg), nil
}

// readConfig merges the files run.sh wrote with numavm.* kernel parameters.
func readConfig() (config, error) {
	env, err := os.ReadFile(envFile)
	if err != nil {
		return config{}, err
	}
	args, err := os.ReadFile(argsFile)
	if err != nil {
		return config{}, err
	}
	cmdline, err := os.ReadFile("/proc/cmdline")
	if err != nil {
		return config{}, err
	}
	return parseConfig(string(env), string(args), string(cmdline))
}

// reopenConsole points stdin, stdout and stderr at /dev/console, for
// initramfs archives built without a /dev/console node, where the kernel could
// not open one for init.
func reopenConsole() {
	f, err := os.OpenFile("/dev/console", os.O_RDWR, 0)
	if err != nil {
		return
	}
	for fd := 0; fd <= 2; fd++ {
		_ = unix.Dup2(int(f.Fd()), fd)
	}
}

// powerOff flushes the console and asks the kernel to switch the machine off;
// QEMU started with -no-reboot then exits.
func powerOff() {
	unix.Sync()
	err := unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	fmt.Printf("NUMAVM-ERROR: power off: %v\n", err)
	for {
		time.Sleep(time.Hour)
	}
}
