package procfs

import (
	"fmt"
	"strconv"
	"strings"
)

// Stat holds the fields of /proc/PID/stat the agent uses.
type Stat struct {
	PID   int
	Comm  string
	State byte // R, S, D, Z, X, T, ...
	PPID  int
	PGRP  int
	// Flags are the kernel's PF_* flags (field 9).
	Flags uint64
	// StartTime is when the process started, in clock ticks since boot
	// (field 22). With the pid it names a process across pid reuse.
	StartTime uint64
}

// pfKthread marks a kernel thread in Flags (PF_KTHREAD, include/linux/sched.h).
const pfKthread = 0x00200000

// KernelThread is true for the kernel's own threads, which have no user
// space to adopt.
func (s Stat) KernelThread() bool { return s.Flags&pfKthread != 0 }

// Running is false for processes that have exited (zombie or dead).
func (s Stat) Running() bool { return s.State != 'Z' && s.State != 'X' && s.State != 'x' }

// ParseStat parses the text of /proc/PID/stat. The command name (field 2)
// is in parentheses and may itself hold spaces and parentheses, so the
// fields after it are found from the last ')'.
func ParseStat(text string) (Stat, error) {
	open := strings.IndexByte(text, '(')
	end := strings.LastIndexByte(text, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("stat %q: no (comm) field", clip(text))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(text[:open]))
	if err != nil {
		return Stat{}, fmt.Errorf("stat %q: pid: %v", clip(text), numErr(err))
	}
	// rest[0] is field 3 (state); field n is rest[n-3].
	rest := strings.Fields(text[end+1:])
	if len(rest) < 20 || len(rest[0]) != 1 {
		return Stat{}, fmt.Errorf("stat %q: %d fields after comm, want at least 20", clip(text), len(rest))
	}
	st := Stat{PID: pid, Comm: text[open+1 : end], State: rest[0][0]}
	if st.PPID, err = strconv.Atoi(rest[1]); err != nil {
		return Stat{}, fmt.Errorf("stat %q: ppid: %v", clip(text), numErr(err))
	}
	if st.PGRP, err = strconv.Atoi(rest[2]); err != nil {
		return Stat{}, fmt.Errorf("stat %q: pgrp: %v", clip(text), numErr(err))
	}
	if st.Flags, err = strconv.ParseUint(rest[6], 10, 64); err != nil {
		return Stat{}, fmt.Errorf("stat %q: flags: %v", clip(text), numErr(err))
	}
	if st.StartTime, err = strconv.ParseUint(rest[19], 10, 64); err != nil {
		return Stat{}, fmt.Errorf("stat %q: starttime: %v", clip(text), numErr(err))
	}
	return st, nil
}

// numErr is why a number did not parse, without the number: strconv's
// errors quote the whole input, which may be a mebibyte of hostile text.
func numErr(err error) error {
	if ne, ok := err.(*strconv.NumError); ok {
		return ne.Err
	}
	return err
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
