package memqos

import (
	"fmt"
	"slices"
)

// Source says which setting decided whether memory QoS is on.
type Source string

// The sources, in precedence order.
const (
	FromAnnotation  Source = "annotation"       // policy auto or none on the pod
	FromNamespace   Source = "namespace"        // enabledNamespaces / disabledNamespaces
	FromClassConfig Source = "class config"     // clusterStrategy.<class>.memoryQOS.enable
	FromBuiltin     Source = "built-in default" // nothing configured: off
)

// Values is the memory QoS of one workload: whether it is on, why, and
// the value of every memcg file of its containers and its pod.
type Values struct {
	Enabled   bool
	Class     Class  // the resolved class; LSE/LSR/SYSTEM keep their name
	ClassFrom string // e.g. "label koordinator.sh/qosClass", "Kubernetes QoS Burstable"
	Source    Source
	Reason    string  // one sentence, fit for an event or a log line
	Profile   Profile // the parameters in force; zero when disabled
	// Containers follow the workload's order; Pod is for the pod cgroup.
	Containers []ContainerValues
	Pod        Settings
}

// ContainerValues holds one container's files, in the order of Knobs.
type ContainerValues struct {
	Name     string
	Settings Settings
}

// Compute gives the memcg files of every container of w. Precedence: the
// pod annotation's policy auto/none, then the namespace lists, then the
// class's enable in resource-qos-config; nothing configured means off.
// policy auto is the recommended profile, whatever the class's memoryQOS
// section says.
// Explicit parameters in the annotation override whichever profile is in
// force, but never switch memory QoS on by themselves. Errors name the bad
// container or class; the caller keeps the files as they are.
func Compute(cfg Config, ns NamespaceConfig, w Workload, opts Options) (Values, error) {
	if err := checkContainers(w.Containers); err != nil {
		return Values{}, err
	}
	if err := checkClass(w.Class); err != nil {
		return Values{}, err
	}
	d := Values{Class: w.Class, ClassFrom: w.ClassFrom}
	st := resolve(cfg, ns, w)
	d.Enabled, d.Source, d.Reason, d.Profile = st.enabled, st.source, st.reason, st.profile
	for _, c := range w.Containers {
		s := allRestored(d.Reason, opts, false)
		if d.Enabled {
			s = containerSettings(d.Profile, c, opts)
		}
		d.Containers = append(d.Containers, ContainerValues{Name: c.Name, Settings: s})
	}
	d.Pod = allRestored(d.Reason, opts, true)
	if d.Enabled {
		d.Pod = podSettings(d.Profile, d.Containers, opts)
	}
	return d, nil
}

type state struct {
	enabled bool
	source  Source
	reason  string
	profile Profile
}

func resolve(cfg Config, nsc NamespaceConfig, w Workload) state {
	ns, c, guaranteed, ps, key := w.Namespace, w.Class, w.Guaranteed, w.Pod, w.PodKey
	be := c == ClassBE
	family := "LS"
	if be {
		family = "BE"
	}
	extra := ""
	if ps.Params != (Params{}) {
		extra = ", with parameters from annotation " + key
	}
	on := func(src Source, p Profile, why string, args ...any) state {
		return state{true, src, fmt.Sprintf(why, args...) + extra, p.With(ps.Params)}
	}
	off := func(src Source, why string, args ...any) state {
		return state{false, src, fmt.Sprintf(why, args...), Profile{}}
	}
	cc, path := classConfig(cfg, c, guaranteed)
	switch {
	case ps.Policy == PolicyNone:
		return off(FromAnnotation, "annotation %s sets policy none", key)
	case ps.Policy == PolicyAuto:
		// The recommended parameters replace the class's, as ack-koordinator's
		// agent does; only the pod's own parameters go on top.
		return on(FromAnnotation, Recommended(be), "annotation %s sets policy auto: recommended %s profile", key, family)
	case slices.Contains(nsc.Disabled, ns):
		return off(FromNamespace, "namespace %q is in disabledNamespaces", ns)
	}
	if slices.Contains(nsc.Enabled, ns) {
		// The switch turns the class on as the cluster configures it; an
		// unlabelled Guaranteed pod has the built-in defaults.
		p, what := TableDefaults(be), "built-in "+family+" defaults"
		if cc != nil && !guaranteed {
			p, what = p.With(cc.Params), path+" parameters"
		}
		return on(FromNamespace, p, "namespace %q is in enabledNamespaces: %s", ns, what)
	}
	switch {
	case cc == nil && guaranteed:
		return off(FromBuiltin, "Guaranteed pod without a class label and no %s: off by default", path)
	case cc == nil:
		return off(FromBuiltin, "no %s: off by default", path)
	case cc.Enable == nil:
		return off(FromBuiltin, "%s.enable is not set: off by default", path)
	case !*cc.Enable:
		return off(FromClassConfig, "%s.enable is false", path)
	}
	return on(FromClassConfig, TableDefaults(be).With(cc.Params), "%s.enable is true", path)
}

// checkClass refuses a class no section governs: the workload's text is
// read into one of the classes, so another is a caller's mistake.
func checkClass(c Class) error {
	switch c {
	case ClassLSE, ClassLSR, ClassLS, ClassBE, ClassSystem:
		return nil
	}
	return fmt.Errorf("class %q is not one of LSE, LSR, LS, BE, SYSTEM", c)
}

// checkContainers rejects sizes no kernel file can express.
func checkContainers(cs []Container) error {
	for _, c := range cs {
		switch {
		case c.RequestBytes < 0:
			return fmt.Errorf("container %q: memory request %d is negative", c.Name, c.RequestBytes)
		case c.LimitBytes < 0:
			return fmt.Errorf("container %q: memory limit %d is negative", c.Name, c.LimitBytes)
		case c.LimitBytes > 0 && c.RequestBytes > c.LimitBytes:
			return fmt.Errorf("container %q: memory request %d exceeds the limit %d", c.Name, c.RequestBytes, c.LimitBytes)
		}
	}
	return nil
}
