package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// testBinary is one line of /numavm/tests.
type testBinary struct {
	pkg, bin, dir string
}

// parseTests reads "import-path<TAB>binary<TAB>working-dir" lines.
func parseTests(text string) ([]testBinary, error) {
	var out []testBinary
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
			return nil, fmt.Errorf("%s line %d: %q is not package<TAB>binary<TAB>dir", testsFile, i+1, line)
		}
		out = append(out, testBinary{f[0], f[1], f[2]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no test binaries", testsFile)
	}
	return out, nil
}

func readTests(path string) ([]testBinary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseTests(string(b))
}

// guestEnv is the environment of every test: a plain root shell's, plus the
// LOCUS_NUMAVM* variables.
func guestEnv(cfg config) []string {
	return append([]string{"PATH=/usr/bin:/bin", "HOME=/root", "TMPDIR=/tmp", "TERM=dumb"}, cfg.env...)
}

func runAll(tests []testBinary, cfg config) tally {
	var total tally
	for _, tb := range tests {
		total.add(runOne(tb, cfg))
	}
	return total
}

// leakGrace is how long output may keep flowing after a test binary exits,
// from children it left running that still hold the pipe.
const leakGrace = 2 * time.Second

// runOne runs one binary with -test.v in its package directory, copies its
// output to the console while counting verdicts and prints a package line.
func runOne(tb testBinary, cfg config) tally {
	start := time.Now()
	var t tally
	fmt.Printf("NUMAVM-PACKAGE-START: %s\n", tb.pkg)
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Printf("NUMAVM-ERROR: %s: %v\n", tb.pkg, err)
		return tally{fail: 1}
	}
	cmd := exec.Command(tb.bin, append([]string{"-test.v"}, cfg.args...)...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = tb.dir, guestEnv(cfg), w, w
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		fmt.Printf("NUMAVM-ERROR: %s: %v\n", tb.pkg, err)
		return tally{fail: 1}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			fmt.Println(sc.Text())
			t.line(sc.Text())
		}
	}()
	err = cmd.Wait()
	select {
	case <-done:
	case <-time.After(leakGrace):
		r.Close()
		<-done
	}
	r.Close()
	t.settle(err)
	verdict := "ok"
	if t.fail > 0 {
		verdict = "FAIL"
	}
	fmt.Printf("NUMAVM-PACKAGE: %s %s %.1fs %s exit=%v\n", verdict, tb.pkg, time.Since(start).Seconds(), t, exitText(err))
	return t
}

func exitText(err error) string {
	if err == nil {
		return "0"
	}
	return strings.ReplaceAll(err.Error(), " ", "_")
}
