package doctor

import (
	"github.com/locus-project/locus/pkg/topology"
)

func init() {
	register(Check{Name: "smt-and-offline-cpus", Order: 90, Run: checkSMT})
}

func checkSMT(env Env) Result {
	onlinePath := env.sys("devices/system/cpu/online")
	s, err := readAttr(onlinePath)
	if err != nil {
		return unreadable(Fail, err, "Locus discovers CPUs from this file; check that sysfs is mounted at --sysfs-root")
	}
	online, err := topology.ParseCPUList(s)
	if err != nil {
		return unreadable(Fail, &readErr{path: onlinePath, reason: err.Error()}, "check that sysfs is mounted at --sysfs-root")
	}
	found := "online CPUs " + online.String()
	smt, err := readAttr(env.sys("devices/system/cpu/smt/control"))
	switch {
	case isMissing(err):
		found += "; SMT: this kernel does not say"
	case err != nil:
		return Result{Status: Warn, Found: found + "; SMT: " + err.Error()}
	default:
		found += "; SMT " + smtMeaning(smt)
	}
	offPath := env.sys("devices/system/cpu/offline")
	off, err := readText(offPath, maxAttr)
	if isMissing(err) {
		return Result{Status: OK, Found: found}
	}
	if err != nil {
		return Result{Status: Warn, Found: found + "; " + err.Error()}
	}
	offline, err := topology.ParseCPUList(off)
	if err != nil {
		return Result{Status: Warn, Found: found + "; " + (&readErr{path: offPath, reason: err.Error()}).Error()}
	}
	if offline.Size() == 0 {
		return Result{Status: OK, Found: found + "; none offline"}
	}
	return Result{Status: Warn, Found: found + "; offline: " + offline.String(),
		Do: "Locus gives offline CPUs to nobody, and re-reads the topology when they come back; online them (echo 1 > " +
			env.sys("devices/system/cpu/cpuN/online") + ") if they were meant to be used"}
}

// smtMeaning spells out a devices/system/cpu/smt/control value.
func smtMeaning(v string) string {
	switch v {
	case "on":
		return "on: whole-core policies keep a core's threads together"
	case "off", "forceoff":
		return v + ": one thread per core"
	case "notsupported":
		return "not supported by these CPUs"
	case "notimplemented":
		return "control not implemented"
	}
	return topology.Quote(v)
}
