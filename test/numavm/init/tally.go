package main

import (
	"fmt"
	"strings"
)

// tally counts top-level test verdicts. Subtests (indented "--- " lines) are
// part of their parent's verdict and are not counted again.
type tally struct {
	pass, fail, skip int
}

func (t tally) String() string {
	return fmt.Sprintf("pass=%d fail=%d skip=%d", t.pass, t.fail, t.skip)
}

func (t *tally) add(o tally) {
	t.pass += o.pass
	t.fail += o.fail
	t.skip += o.skip
}

// line counts one line of `-test.v` output.
func (t *tally) line(s string) {
	switch {
	case strings.HasPrefix(s, "--- PASS: "):
		t.pass++
	case strings.HasPrefix(s, "--- FAIL: "):
		t.fail++
	case strings.HasPrefix(s, "--- SKIP: "):
		t.skip++
	}
}

// settle accounts for a binary that failed without a failing test line, as
// a panic, a -test.timeout or a failed TestMain leaves it: that counts as one
// failure, so a crash can never read as success.
func (t *tally) settle(exitErr error) {
	if exitErr != nil && t.fail == 0 {
		t.fail++
	}
}
