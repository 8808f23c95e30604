// Package fuzzseed holds the hostile inputs every fuzz target of the project
// starts from, and the checks they share. The parsers read text from pods,
// ConfigMaps, other nodes and the kernel; the seeds are the shapes that broke
// or nearly broke them before: an id range up to MaxInt64, nesting deep
// enough to exhaust a recursive decoder, and a document of a mebibyte.
package fuzzseed

import (
	"os"
	"strings"
	"testing"
	"time"
)

// HugeRange is a CPU list whose expansion never finishes.
const HugeRange = "0-9223372036854775807"

// Depth is how deep the nested seeds go: encoding/json stops at 10000.
const Depth = 10000

// Long is the size of the long seeds, past bufio.Scanner's default token.
const Long = 1 << 20

// Lists are CPU and node lists that must be refused or read in bounded time.
func Lists() []string {
	return []string{
		HugeRange, "9223372036854775807", "0-2147483648", "0-1000000", "-1", "+1", "1-0",
		"0,0,0", "0-3,,5", " 0-3 ", "0x10", "00000000000000000000000000001",
		strings.Repeat("0-1,", Long/4),
	}
}

// Texts are hostile documents for any text parser: deep JSON and YAML
// nesting, a mebibyte on one line and on many, NUL and invalid UTF-8.
func Texts() []string {
	return []string{
		"", "\x00", "\xff\xfe", "null", "{}", "[]",
		strings.Repeat("[", Depth) + strings.Repeat("]", Depth),
		strings.Repeat(`{"a":`, Depth) + "1" + strings.Repeat("}", Depth),
		strings.Repeat("- ", Depth) + "x",
		strings.Repeat("a:\n ", 1000) + "b",
		"&a [*a]", // a YAML alias to itself
		strings.Repeat("x", Long),
		strings.Repeat("x\n", Long/2),
	}
}

// Add adds every seed to f through conv, which places the text where the
// target's input has it (a field of a JSON object, a line of a file...).
func Add(f *testing.F, conv func(string) string) {
	for _, s := range append(Texts(), Lists()...) {
		f.Add(conv(s))
	}
}

// Same is the identity, for Add.
func Same(s string) string { return s }

// Budget is the time one input may take. It is generous: the fuzzers look for
// inputs costing seconds and gigabytes, not for slow machines.
const Budget = 5 * time.Second

// emulated is how much longer an input may take in the NUMA test guest,
// whose CPU is emulated (QEMU TCG): there a 1 MiB seed alone took 6 s.
const emulated = 10

// Timed runs parse and fails t when it takes longer than Budget.
func Timed(t *testing.T, what string, parse func()) {
	t.Helper()
	budget := Budget
	if os.Getenv("LOCUS_NUMAVM") == "1" {
		budget *= emulated
	}
	start := time.Now()
	parse()
	if d := time.Since(start); d > budget {
		t.Fatalf("%s took %v", what, d)
	}
}

// MaxErrorLen bounds an error message: an error repeating a mebibyte of
// hostile input would flood the logs and Events it is copied into.
const MaxErrorLen = 4096

// CheckError fails t when err is too long or names none of fields.
func CheckError(t *testing.T, err error, fields ...string) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if len(msg) > MaxErrorLen {
		t.Fatalf("error of %d bytes: %.200s...", len(msg), msg)
	}
	if len(fields) == 0 {
		return
	}
	for _, f := range fields {
		if strings.Contains(msg, f) {
			return
		}
	}
	t.Fatalf("error %q names none of %q", msg, fields)
}
