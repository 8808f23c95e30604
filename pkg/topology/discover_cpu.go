package topology

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/utils/cpuset"
)

// groupKey identifies a core, die or cache before renumbering. Groups known by
// their member list use lowest (their lowest online CPU); groups known only by
// a sysfs id use pkg/die/id with lowest = -1, so the two kinds never collide.
type groupKey struct {
	lowest, pkg, die, id int
}

// renumberer hands out sequential ids in order of first sight. CPUs are
// visited in ascending order, so a group's id follows its lowest online CPU.
type renumberer map[groupKey]int

func (r renumberer) id(k groupKey) int {
	if id, ok := r[k]; ok {
		return id
	}
	r[k] = len(r)
	return r[k]
}

// cpuScan carries what every per-CPU read needs. Once a sibling or cache list
// has been read, coreOf and l3Of remember the group of every CPU it names, so
// each core and cache is read once rather than once per CPU: on a 256-CPU
// machine that removes most of the file reads, which are the whole cost.
type cpuScan struct {
	dir    string
	online cpuset.CPUSet
	cores  renumberer
	dies   renumberer
	l3s    renumberer
	coreOf map[int]int
	l3Of   map[int]int
}

func discoverCPUs(cpuDir string, online cpuset.CPUSet) ([]CPU, error) {
	s := cpuScan{dir: cpuDir, online: online, cores: renumberer{}, dies: renumberer{}, l3s: renumberer{},
		coreOf: map[int]int{}, l3Of: map[int]int{}}
	ids := online.List()
	cpus := make([]CPU, 0, len(ids))
	for _, id := range ids {
		c, err := s.read(id)
		if err != nil {
			return nil, err
		}
		cpus = append(cpus, c)
	}
	return cpus, nil
}

func (s cpuScan) read(id int) (CPU, error) {
	base := filepath.Join(s.dir, fmt.Sprintf("cpu%d", id))
	topo := filepath.Join(base, "topology")
	pkg, err := readInt(filepath.Join(topo, "physical_package_id"))
	if err != nil {
		return CPU{}, err
	}
	// Some arm64 firmware reports -1 when it describes no packages: the
	// machine is then one package.
	pkg = max(pkg, 0)
	// die_id is missing before Linux 5.2 and -1 where the platform has no dies;
	// either way the package is the die.
	die, found, err := readOptionalInt(filepath.Join(topo, "die_id"))
	if err != nil {
		return CPU{}, err
	}
	if !found || die < 0 {
		die = -1
	}
	c := CPU{ID: id, Socket: pkg, Die: s.dies.id(groupKey{lowest: -1, pkg: pkg, die: die})}
	if c.Core, err = s.core(topo, id, pkg, die); err != nil {
		return CPU{}, err
	}
	if c.L3, err = s.l3(filepath.Join(base, "cache"), id, pkg); err != nil {
		return CPU{}, err
	}
	return c, nil
}

func (s cpuScan) core(topo string, id, pkg, die int) (int, error) {
	if core, ok := s.coreOf[id]; ok {
		return core, nil
	}
	key, members, err := s.coreKey(topo, id, pkg, die)
	if err != nil {
		return 0, err
	}
	core := s.cores.id(key)
	s.remember(s.coreOf, members, core)
	return core, nil
}

func (s cpuScan) l3(cacheDir string, id, pkg int) (int, error) {
	if l3, ok := s.l3Of[id]; ok {
		return l3, nil
	}
	key, members, found, err := s.l3Key(cacheDir, id, pkg)
	if err != nil || !found {
		return -1, err
	}
	l3 := s.l3s.id(key)
	s.remember(s.l3Of, members, l3)
	return l3, nil
}

// remember records group for the online CPUs of members.
func (s cpuScan) remember(of map[int]int, members cpuset.CPUSet, group int) {
	for _, m := range members.UnsortedList() {
		if s.online.Contains(m) {
			of[m] = group
		}
	}
}

// coreKey identifies the physical core of cpu id. The SMT sibling list is the
// kernel's own grouping and stays right where core_id repeats (across dies or
// clusters); core_id is the fallback when neither sibling file exists.
// members is the sibling list, empty when the core was found by core_id.
func (s cpuScan) coreKey(topo string, id, pkg, die int) (k groupKey, members cpuset.CPUSet, err error) {
	for _, name := range []string{"thread_siblings_list", "core_cpus_list"} {
		siblings, found, err := readOptionalList(filepath.Join(topo, name))
		if err != nil {
			return groupKey{}, siblings, err
		}
		if found {
			return groupKey{lowest: lowestOnline(siblings, id, s.online)}, siblings, nil
		}
	}
	coreID, err := readInt(filepath.Join(topo, "core_id"))
	if err != nil {
		return groupKey{}, cpuset.New(), err
	}
	return groupKey{lowest: -1, pkg: pkg, die: die, id: coreID}, cpuset.New(), nil
}

// l3Key identifies the level-3 cache of cpu id, found=false when the CPU
// reports none. An L3 never spans packages, so cache ids are qualified by
// package in case a platform numbers them per package. members is the cache's
// shared_cpu_list, empty when the cache has an id but no list.
func (s cpuScan) l3Key(cacheDir string, id, pkg int) (k groupKey, members cpuset.CPUSet, found bool, err error) {
	members = cpuset.New()
	entries, err := os.ReadDir(cacheDir)
	if os.IsNotExist(err) {
		return k, members, false, nil // VMs and small boards may describe no caches
	}
	if err != nil {
		return k, members, false, err
	}
	// The L3 is normally the last index, so search from the end.
	for i := len(entries) - 1; i >= 0; i-- {
		name := entries[i].Name()
		if !strings.HasPrefix(name, "index") {
			continue
		}
		dir := filepath.Join(cacheDir, name)
		level, err := readInt(filepath.Join(dir, "level"))
		if err != nil {
			return k, members, false, err
		}
		if level != 3 {
			continue
		}
		cacheID, hasID, err := readOptionalInt(filepath.Join(dir, "id"))
		if err != nil {
			return k, members, false, err
		}
		shared, hasList, err := readOptionalList(filepath.Join(dir, "shared_cpu_list"))
		switch {
		case err != nil:
			return k, members, false, err
		case hasID:
			return groupKey{lowest: -1, pkg: pkg, id: cacheID}, shared, true, nil
		case hasList:
			return groupKey{lowest: lowestOnline(shared, id, s.online)}, shared, true, nil
		default:
			return k, members, false, fmt.Errorf("%s: neither id nor shared_cpu_list", dir)
		}
	}
	return k, members, false, nil
}
