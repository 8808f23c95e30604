package locality

import (
	"bufio"
	"fmt"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// ParseCPUsAllowed reads Cpus_allowed_list from the text of
// /proc/PID/status: the CPUs the process may run on, whose nodes are its
// local nodes.
func ParseCPUsAllowed(text string) (cpuset.CPUSet, error) {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || key != "Cpus_allowed_list" {
			continue
		}
		set, err := topology.ParseCPUList(val)
		if err != nil {
			return cpuset.New(), fmt.Errorf("status field Cpus_allowed_list: %w", err)
		}
		return set, nil
	}
	return cpuset.New(), fmt.Errorf("no Cpus_allowed_list line")
}
