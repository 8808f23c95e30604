package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// numadQueue is the System V message queue numad makes (key 0xdeadbeef) to
// reach its daemon, and leaves behind after every run.
const numadQueue = "0xdeadbeef"

// numadPIDFile is where numad's daemon registers itself.
const numadPIDFile = "/var/run/numad.pid"

// The numad contract on this host: locus, installed as numad, and the real
// numad (Debian's package, installed by hack/test-deps.sh) asked the same
// questions side by side print the same bytes and exit alike. The questions
// never start numad's daemon: -w answers without one, and a malformed -w
// fails before. Both measure for 2 s, so the questions run at once.
func TestNumadMatchesRealNumad(t *testing.T) {
	realNumad, err := exec.LookPath("numad")
	if err != nil {
		t.Fatal("numad not found: install the Debian package numad (apt-get install numad), as hack/test-deps.sh does")
	}
	if resolved, _ := filepath.EvalSymlinks(realNumad); filepath.Base(resolved) != "numad" {
		t.Fatalf("%s is %s, not numad itself: this test compares with the real numad", realNumad, resolved)
	}
	hadQueue := numadQueueExists(t)
	_, err = os.Stat(numadPIDFile)
	hadDaemon := err == nil
	t.Cleanup(func() {
		// -w never starts numad's daemon; should one appear all the same,
		// it is this test's, and it goes.
		if raw, err := os.ReadFile(numadPIDFile); !hadDaemon && err == nil {
			t.Errorf("numad's daemon started (%s): %s", numadPIDFile, strings.TrimSpace(string(raw)))
			if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
		}
		if !hadQueue && numadQueueExists(t) {
			if out, err := exec.Command("ipcrm", "-Q", numadQueue).CombinedOutput(); err != nil {
				t.Errorf("removing numad's message queue: %v\n%s", err, out)
			}
		}
	})
	ours := filepath.Join(t.TempDir(), "numad")
	if err := os.Symlink(locusBinary(t), ours); err != nil {
		t.Fatal(err)
	}
	questions := [][]string{
		{"-w", "1:100"}, {"-w", "2"}, {"-w", "1.5:64"}, {"-w", "64:1024"}, {"-w", "1:100000000"}, // this host has one node
		{"-w", "x:y"}, {"-w", "-1"}, {"-w", "1:-5"}, {"-w", "1:x"}, {"-w", ""}, {"-w", "1", "extra"},
	}
	type result struct {
		stdout, stderr string
		code           int
	}
	run := func(bin string, args []string) result {
		var out, errOut bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Errorf("%s %q: %v", bin, args, err)
		}
		return result{out.String(), errOut.String(), code}
	}
	got := make([][2]result, len(questions))
	var wg sync.WaitGroup
	for i, q := range questions {
		for j, bin := range []string{realNumad, ours} {
			wg.Go(func() { got[i][j] = run(bin, q) })
		}
	}
	wg.Wait()
	for i, q := range questions {
		theirs, mine := got[i][0], got[i][1]
		if mine.stdout != theirs.stdout || mine.code != theirs.code {
			t.Errorf("numad %q: locus printed %q, exit %d; numad printed %q, exit %d (stderr %q / %q)",
				q, mine.stdout, mine.code, theirs.stdout, theirs.code, mine.stderr, theirs.stderr)
		}
		// numad's own refusals are worded as numad words them.
		if strings.HasPrefix(theirs.stderr, "Can't parse") && mine.stderr != theirs.stderr {
			t.Errorf("numad %q: locus said %q, numad %q", q, mine.stderr, theirs.stderr)
		}
	}
}

// numadQueueExists reports whether numad's message queue is there.
func numadQueueExists(t *testing.T) bool {
	t.Helper()
	raw, err := os.ReadFile("/proc/sysvipc/msg")
	if err != nil {
		t.Fatal(err)
	}
	const key = "-559038737" // 0xdeadbeef as the file spells keys, a signed int
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == key {
			return true
		}
	}
	return false
}
