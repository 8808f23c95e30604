package doctor

import (
	"io/fs"
	"os"
)

func init() {
	register(Check{Name: "runtime-nri", Order: 160, Run: checkNRI})
}

// checkNRI only looks at the socket; connecting would register a plugin
// with the runtime, and the doctor changes nothing.
func checkNRI(env Env) Result {
	fi, err := os.Lstat(env.NRISocket)
	if err != nil {
		return Result{Status: NA, Found: "no NRI socket at " + env.NRISocket + ": the runtime does not expose NRI (containerd 1.7+ and CRI-O 1.26+ can), or it listens elsewhere",
			Do: "Locus works from the kubelet's cgroups without NRI"}
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return Result{Status: Warn, Found: env.NRISocket + " is not a socket (" + fi.Mode().Type().String() + ")",
			Do: "point the runtime's NRI socket_path there, or remove what is in its place"}
	}
	return Result{Status: OK, Found: "the runtime exposes NRI at " + env.NRISocket}
}
