// Package cgroupfile names what a decision asks of cgroup files, with no
// I/O: the files Locus writes (Knob), a value to hold (Op), an original to
// give back (Target), and the check of a cgroup path (CheckRel). The pure
// cores (pkg/decide and what it builds on) speak these types without
// importing the writer, pkg/cgroup, which takes them as they are (its
// Knob, Op and Target are these) and alone touches the files.
package cgroupfile
