// Package podcgroup maps pods and containers to the cgroups the kubelet and the
// container runtime give them, for both cgroup drivers (cgroupfs, systemd) and
// every QoS tier. It is pure: callers pass in what the pod says and, where the
// layout depends on the machine, a function that says whether a cgroup exists.
//
// Only two pieces of pod-supplied text ever reach a path: the pod UID, which
// must be a UUID, and container IDs, which must be 64 hexadecimal digits.
// Anything else is refused with an error naming the field, so hostile or
// corrupt text cannot name another cgroup; pkg/cgroup checks containment again.
package podcgroup

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// Driver is the kubelet's cgroup driver.
type Driver string

const (
	// Cgroupfs lays pods out as kubepods/<tier>/pod<uid>/<container>.
	Cgroupfs Driver = "cgroupfs"
	// Systemd lays them out as slices and scopes:
	// kubepods.slice/kubepods-<tier>.slice/kubepods-<tier>-pod<uid_>.slice/<runtime>-<id>.scope.
	Systemd Driver = "systemd"
)

// ParseDriver reads a --cgroup-driver value; "" and "auto" mean detect.
func ParseDriver(s string) (Driver, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return "", nil
	case string(Cgroupfs):
		return Cgroupfs, nil
	case string(Systemd):
		return Systemd, nil
	}
	return "", fmt.Errorf("cgroup driver %q is not one of auto, cgroupfs, systemd", s)
}

// The Kubernetes QoS classes, as pod status spells them.
const (
	Guaranteed = "Guaranteed"
	Burstable  = "Burstable"
	BestEffort = "BestEffort"
)

// Runtime is the container runtime named by a container ID's scheme.
type Runtime string

const (
	Containerd Runtime = "containerd"
	CRIO       Runtime = "cri-o"
	Docker     Runtime = "docker"
)

var (
	uidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	idRE  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// CheckUID accepts a pod UID only in the lower-case UUID form the apiserver
// generates.
func CheckUID(uid string) error {
	if !uidRE.MatchString(uid) {
		return fmt.Errorf("metadata.uid %s is not a lower-case UUID", topology.Quote(uid))
	}
	return nil
}

// ContainerID is a parsed status.containerStatuses[].containerID.
type ContainerID struct {
	Runtime Runtime
	ID      string // 64 hexadecimal digits
}

// ParseContainerID reads "<runtime>://<id>" as the kubelet reports it.
func ParseContainerID(s string) (ContainerID, error) {
	scheme, id, ok := strings.Cut(s, "://")
	if !ok {
		return ContainerID{}, fmt.Errorf("containerID %s is not <runtime>://<id>", topology.Quote(s))
	}
	var rt Runtime
	switch scheme {
	case "containerd":
		rt = Containerd
	case "cri-o":
		rt = CRIO
	case "docker":
		rt = Docker
	default:
		return ContainerID{}, fmt.Errorf("containerID %s: runtime %s is not one of containerd, cri-o, docker", topology.Quote(s), topology.Quote(scheme))
	}
	if !idRE.MatchString(id) {
		return ContainerID{}, fmt.Errorf("containerID %s: the id is not 64 lower-case hexadecimal digits", topology.Quote(s))
	}
	return ContainerID{Runtime: rt, ID: id}, nil
}

// tier is the QoS class's directory part: "" for Guaranteed pods, which sit
// directly under kubepods.
func tier(qos string) (string, error) {
	switch qos {
	case Guaranteed:
		return "", nil
	case Burstable:
		return "burstable", nil
	case BestEffort:
		return "besteffort", nil
	}
	return "", fmt.Errorf("QoS class %q is not one of Guaranteed, Burstable, BestEffort", qos)
}

// PodCgroup is the pod's cgroup relative to the cgroup root (on v1, to each
// controller's mount).
func PodCgroup(d Driver, qos, uid string) (string, error) {
	if err := CheckUID(uid); err != nil {
		return "", err
	}
	t, err := tier(qos)
	if err != nil {
		return "", err
	}
	switch d {
	case Cgroupfs:
		if t == "" {
			return "kubepods/pod" + uid, nil
		}
		return "kubepods/" + t + "/pod" + uid, nil
	case Systemd:
		// systemd reserves "-" as the slice hierarchy separator, so the
		// kubelet writes the UID with underscores.
		u := strings.ReplaceAll(uid, "-", "_")
		if t == "" {
			return "kubepods.slice/kubepods-pod" + u + ".slice", nil
		}
		return "kubepods.slice/kubepods-" + t + ".slice/kubepods-" + t + "-pod" + u + ".slice", nil
	}
	return "", fmt.Errorf("cgroup driver %q is not one of cgroupfs, systemd", d)
}

// ContainerCandidates lists the cgroups a container may have under its pod's,
// the usual one first. Runtimes differ in the directory name: under systemd
// each names its scope (cri-containerd-, crio-, docker-<id>.scope); under
// cgroupfs containerd and docker use the bare ID and CRI-O prefixes "crio-".
// The caller takes the first that exists.
func ContainerCandidates(d Driver, podCgroup string, id ContainerID) ([]string, error) {
	if !idRE.MatchString(id.ID) {
		return nil, fmt.Errorf("container id %s is not 64 lower-case hexadecimal digits", topology.Quote(id.ID))
	}
	var names []string
	switch d {
	case Systemd:
		switch id.Runtime {
		case Containerd:
			names = []string{"cri-containerd-" + id.ID + ".scope"}
		case CRIO:
			names = []string{"crio-" + id.ID + ".scope"}
		case Docker:
			names = []string{"docker-" + id.ID + ".scope"}
		}
	case Cgroupfs:
		switch id.Runtime {
		case Containerd, Docker:
			names = []string{id.ID}
		case CRIO:
			names = []string{"crio-" + id.ID, id.ID}
		}
	default:
		return nil, fmt.Errorf("cgroup driver %q is not one of cgroupfs, systemd", d)
	}
	if names == nil {
		return nil, fmt.Errorf("runtime %q is not one of containerd, cri-o, docker", id.Runtime)
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = podCgroup + "/" + n
	}
	return out, nil
}

// DetectDriver tells the driver from the top-level cgroup the kubelet made:
// kubepods.slice (systemd) or kubepods (cgroupfs). ok is false when neither
// exists yet (the kubelet has not started) or both do (ambiguous: give the
// driver explicitly).
func DetectDriver(exists func(rel string) bool) (d Driver, ok bool) {
	sd, fs := exists("kubepods.slice"), exists("kubepods")
	switch {
	case sd && !fs:
		return Systemd, true
	case fs && !sd:
		return Cgroupfs, true
	}
	return "", false
}

// ContainerDir reads the name of a directory found under a pod's cgroup as
// a container's, the inverse of ContainerCandidates: ok is false for any
// other name (the runtime's own scopes, such as CRI-O's conmon, or anything
// unknown), which is then left alone.
func ContainerDir(d Driver, name string) (id string, ok bool) {
	var prefixes []string
	suffix := ""
	switch d {
	case Systemd:
		prefixes, suffix = []string{"cri-containerd-", "crio-", "docker-"}, ".scope"
	case Cgroupfs:
		prefixes = []string{"", "crio-"}
	default:
		return "", false
	}
	rest, found := strings.CutSuffix(name, suffix)
	if !found {
		return "", false
	}
	for _, p := range prefixes {
		if id, found := strings.CutPrefix(rest, p); found && idRE.MatchString(id) {
			return id, true
		}
	}
	return "", false
}

// QoSParents are the cgroups under which the kubelet makes pod cgroups:
// kubepods itself (Guaranteed pods) and its burstable and besteffort tiers.
func QoSParents(d Driver) []string {
	switch d {
	case Cgroupfs:
		return []string{"kubepods", "kubepods/burstable", "kubepods/besteffort"}
	case Systemd:
		return []string{"kubepods.slice", "kubepods.slice/kubepods-burstable.slice", "kubepods.slice/kubepods-besteffort.slice"}
	}
	return nil
}
