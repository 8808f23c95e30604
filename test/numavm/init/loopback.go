package main

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// loopbackUp brings lo up, as every host has it: tests listen on 127.0.0.1
// (the agent's /metrics scraped over HTTP, redis in the benchmarks), and the
// guest has no other network. The kernel gives lo 127.0.0.1 as it comes up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("lo: socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("lo: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo: read its flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo: bring it up: %w", err)
	}
	return nil
}
