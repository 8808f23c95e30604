package kubelet

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"k8s.io/utils/cpuset"
)

// DefaultDir is the kubelet's root directory (its --root-dir).
const DefaultDir = "/var/lib/kubelet"

// State is what was read of the kubelet, for the agent's decision and for a
// host check: each part is nil when its file does not exist, and Errors
// name every file that exists but could not be believed.
type State struct {
	CPU    *CPUManager    `json:"cpuManager,omitempty"`
	Memory *MemoryManager `json:"memoryManager,omitempty"`
	Config *Config        `json:"config,omitempty"`
	Errors []FileError    `json:"errors,omitempty"`
	// CPUUnknown is set when cpu_manager_state exists but could not be
	// read: then every CPU must be taken as the kubelet's.
	CPUUnknown bool `json:"cpuUnknown,omitempty"`
}

// FileError is a file that exists and could not be read or believed.
type FileError struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (e FileError) String() string { return e.Path + ": " + e.Reason }

// Paths are the files Read reads.
type Paths struct {
	Dir    string // the kubelet's root directory, with the checkpoints
	Config string // its configuration file; "" is Dir/config.yaml
}

func (p Paths) files() (cpu, mem, cfg string) {
	cfg = p.Config
	if cfg == "" {
		cfg = filepath.Join(p.Dir, ConfigFile)
	}
	return filepath.Join(p.Dir, CPUManagerFile), filepath.Join(p.Dir, MemoryManagerFile), cfg
}

// Read reads the kubelet's files. It never writes and never fails: what
// cannot be read is in Errors.
func Read(p Paths) State {
	cpuPath, memPath, cfgPath := p.files()
	var s State
	if raw, ok := s.read(cpuPath, MaxFileBytes); ok {
		if c, err := ParseCPUManager(raw); err != nil {
			s.fail(cpuPath, err.Error())
		} else {
			s.CPU = &c
		}
	}
	s.CPUUnknown = s.CPU == nil && len(s.Errors) > 0
	if raw, ok := s.read(memPath, MaxFileBytes); ok {
		if m, err := ParseMemoryManager(raw); err != nil {
			s.fail(memPath, err.Error())
		} else {
			s.Memory = &m
		}
	}
	if _, err := os.Stat(cfgPath); p.Config != "" && errors.Is(err, fs.ErrNotExist) {
		s.fail(cfgPath, "does not exist (given as the kubelet's configuration file)")
	}
	if raw, ok := s.read(cfgPath, MaxConfigBytes); ok {
		if c, err := ParseConfig(raw); err != nil {
			s.fail(cfgPath, err.Error())
		} else {
			s.Config = &c
		}
	}
	return s
}

// read reads a regular file up to max bytes; a missing one is no error.
func (s *State) read(path string, max int64) ([]byte, bool) {
	// O_NONBLOCK: a FIFO planted where a checkpoint should be would block
	// the open until a writer came; it is refused below instead.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		s.fail(path, err.Error())
		return nil, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		s.fail(path, "not a regular file")
		return nil, false
	}
	raw, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		s.fail(path, err.Error())
		return nil, false
	}
	if int64(len(raw)) > max {
		s.fail(path, fmt.Sprintf("larger than %d bytes", max))
		return nil, false
	}
	return raw, true
}

func (s *State) fail(path, reason string) {
	s.Errors = append(s.Errors, FileError{Path: path, Reason: reason})
}

// Stamp changes whenever one of the files Read reads changes (size,
// modification time, inode), so that a caller reads them again only then.
func Stamp(p Paths) string {
	cpuPath, memPath, cfgPath := p.files()
	var b strings.Builder
	for _, f := range []string{cpuPath, memPath, cfgPath} {
		if st, err := os.Stat(f); err == nil {
			b.WriteString(st.ModTime().String() + "/" + strconv.FormatInt(st.Size(), 10) + "/" + inode(st))
		} else {
			b.WriteString("-")
		}
		b.WriteByte(0)
	}
	return b.String()
}

// Summary is the state in a few words, for `locus status` and a host check.
type Summary struct {
	CPUManagerPolicy      string            `json:"cpuManagerPolicy"`
	DefaultCPUs           string            `json:"defaultCPUs,omitempty"`
	ExclusiveCPUs         string            `json:"exclusiveCPUs,omitempty"`
	Exclusive             map[string]string `json:"exclusive,omitempty"` // pod UID/container (or container ID): CPUs
	ReservedCPUs          string            `json:"reservedCPUs,omitempty"`
	MemoryManagerPolicy   string            `json:"memoryManagerPolicy,omitempty"`
	TopologyManagerPolicy string            `json:"topologyManagerPolicy,omitempty"`
	TopologyManagerScope  string            `json:"topologyManagerScope,omitempty"`
	CgroupDriver          string            `json:"cgroupDriver,omitempty"`
	Errors                []string          `json:"errors,omitempty"`
}

// Summary says what the kubelet's files say; the CPU manager's policy is the
// checkpoint's, else the configuration's, else "unknown".
func (s State) Summary() Summary {
	out := Summary{CPUManagerPolicy: "unknown"}
	if s.Config != nil {
		c := s.Config
		out.CPUManagerPolicy, out.MemoryManagerPolicy = c.CPUManagerPolicy, c.MemoryManagerPolicy
		out.TopologyManagerPolicy, out.TopologyManagerScope, out.CgroupDriver = c.TopologyManagerPolicy, c.TopologyManagerScope, c.CgroupDriver
		out.ReservedCPUs = c.ReservedSystemCPUs.String()
	}
	if s.Memory != nil {
		out.MemoryManagerPolicy = s.Memory.Policy
	}
	if s.CPU != nil {
		out.CPUManagerPolicy, out.DefaultCPUs = s.CPU.Policy, s.CPU.Default.String()
		out.ExclusiveCPUs = s.CPU.Exclusive().String()
		out.Exclusive = map[string]string{}
		for uid, cs := range s.CPU.Assignments {
			for name, set := range cs {
				out.Exclusive[uid+"/"+name] = set.String()
			}
		}
		for id, set := range s.CPU.ByContainerID {
			out.Exclusive[id] = set.String()
		}
	}
	for _, e := range s.Errors {
		out.Errors = append(out.Errors, e.String())
	}
	return out
}

// Reserved is the kubelet's reservedSystemCPUs, empty when unknown.
func (s State) Reserved() cpuset.CPUSet {
	if s.Config == nil {
		return cpuset.New()
	}
	return s.Config.ReservedSystemCPUs
}
