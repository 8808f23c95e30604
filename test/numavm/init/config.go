package main

import (
	"fmt"
	"sort"
	"strings"
)

// config is what init needs besides the test list: the environment every
// test gets, the arguments every test binary gets and the cgroup layout.
type config struct {
	env    []string // KEY=VALUE, sorted by key
	args   []string
	cgroup string // "v2" or "v1"
}

// envPrefix marks the variables the guest exports; LOCUS_NUMAVM=1 alone tells
// a test it runs inside the guest.
const envPrefix = "LOCUS_NUMAVM"

// parseConfig merges /numavm/env ("KEY=VALUE" lines), /numavm/args (one
// argument a line) and the kernel command line, whose numavm.KEY=VALUE
// parameters override the file as LOCUS_NUMAVM_KEY; numavm.run=REGEX adds
// -test.run=REGEX, so one initramfs can be re-booted to run a single test.
func parseConfig(envText, argsText, cmdline string) (config, error) {
	vars := map[string]string{}
	for i, line := range strings.Split(envText, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" {
			return config{}, fmt.Errorf("%s line %d: %q is not KEY=VALUE", envFile, i+1, line)
		}
		vars[k] = v
	}
	var cfg config
	for _, line := range strings.Split(argsText, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			cfg.args = append(cfg.args, line)
		}
	}
	for _, p := range splitCmdline(cmdline) {
		k, v, _ := strings.Cut(p, "=")
		name, ok := strings.CutPrefix(k, "numavm.")
		if !ok || name == "" {
			continue
		}
		if name == "run" {
			cfg.args = append(cfg.args, "-test.run="+v)
			continue
		}
		vars[envPrefix+"_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))] = v
	}
	vars[envPrefix] = "1"
	cfg.cgroup = vars[envPrefix+"_CGROUP"]
	if cfg.cgroup == "" {
		cfg.cgroup = "v2"
		vars[envPrefix+"_CGROUP"] = "v2"
	}
	if cfg.cgroup != "v1" && cfg.cgroup != "v2" {
		return config{}, fmt.Errorf("%s_CGROUP=%q: want v1 or v2", envPrefix, cfg.cgroup)
	}
	for k, v := range vars {
		cfg.env = append(cfg.env, k+"="+v)
	}
	sort.Strings(cfg.env)
	return cfg, nil
}

// splitCmdline splits a kernel command line the way the kernel does: on
// spaces, except inside double quotes, which are dropped.
func splitCmdline(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, started := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, started = !quoted, true
		case (r == ' ' || r == '\n' || r == '\t') && !quoted:
			if started {
				out = append(out, cur.String())
			}
			cur.Reset()
			started = false
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}
