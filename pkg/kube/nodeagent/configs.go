package nodeagent

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"

	"github.com/locus-project/locus/pkg/kube/kubeclient"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/sloconfig"
)

// configWatch keeps the two ConfigMaps' SLO settings, each key decoded
// once, as it arrives (pkg/sloconfig): the last value that decoded stays in
// force, and a malformed one is a Warning event on the ConfigMap and a log
// line, both naming the field. Each good value is saved in the state
// directory as written, so that a restart while a ConfigMap is malformed
// starts from it; with none saved, nothing is in force until a good value
// arrives, and the agent leaves memory QoS files alone meanwhile (held).
type configWatch struct {
	ns        string
	dir       string // the agent's state directory: SavedConfigFile
	informers []cache.SharedIndexInformer
	keys      []watchedKey
	resQoS    *sloconfig.Holder[sloconfig.ResourceQoS]
	nsQoS     *sloconfig.Holder[memqos.NamespaceConfig]
	burst     *sloconfig.Holder[sloconfig.CPUBurst]
	events    *eventPoster
	log       *slog.Logger
	poke      func()

	mu    sync.Mutex
	errs  map[string]string // by ConfigMap name and key: the error in force
	saved savedConfig
}

// holder is a sloconfig.Holder of any value type.
type holder interface {
	Update(raw string) error
	Known() bool
}

// watchedKey is one ConfigMap key and the holder its value goes to.
type watchedKey struct {
	name, key string
	h         holder
	inf       cache.SharedIndexInformer
}

func (w watchedKey) id() string { return w.name + "/" + w.key }

func newConfigWatch(o SourceOptions, events *eventPoster, poke func()) *configWatch {
	c := &configWatch{ns: o.ConfigNamespace, dir: o.StateDir, resQoS: sloconfig.NewHolder(sloconfig.ParseResourceQoS),
		burst: sloconfig.NewHolder(sloconfig.ParseCPUBurst), nsQoS: sloconfig.NewHolder(sloconfig.ParseNamespaces),
		events: events, log: o.Logger, poke: poke, errs: map[string]string{}}
	saved, err := loadSavedConfig(o.StateDir)
	if err != nil {
		c.log.Warn("cannot read the last good cluster configuration; waiting for the ConfigMaps", "err", err)
	}
	c.saved = saved
	for _, w := range []watchedKey{
		{name: o.ResourceQoSConfigMap, key: sloconfig.ConfigKeyResourceQoS, h: c.resQoS},
		{name: o.ResourceQoSConfigMap, key: sloconfig.ConfigKeyCPUBurst, h: c.burst},
		{name: o.PodQoSConfigMap, key: sloconfig.ConfigKeyNamespaces, h: c.nsQoS},
	} {
		if v, ok := saved.Values[w.id()]; ok {
			if err := w.h.Update(v.Raw); err != nil {
				c.log.Warn("saved configuration does not parse; waiting for the ConfigMap", "configMap", c.ns+"/"+w.name, "key", w.key, "err", err)
			} else {
				c.log.Info("starting from the last good configuration", "configMap", c.ns+"/"+w.name, "key", w.key,
					"resourceVersion", v.ResourceVersion, "accepted", v.Accepted)
			}
		}
		w.inf = cache.NewSharedIndexInformer(namedConfigMap(o.Client, o.ConfigNamespace, w.name), &corev1.ConfigMap{}, 0, cache.Indexers{})
		_, _ = w.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { c.apply(w, asConfigMap(obj)) },
			UpdateFunc: func(old, cur any) {
				if o, n := asConfigMap(old), asConfigMap(cur); o == nil || n == nil || o.ResourceVersion != n.ResourceVersion {
					c.apply(w, n)
				}
			},
			// A deleted ConfigMap is an empty one: memory QoS off.
			DeleteFunc: func(any) { c.apply(w, nil) },
		})
		c.informers = append(c.informers, w.inf)
		c.keys = append(c.keys, w)
	}
	return c
}

// settle runs once the caches have synced: a ConfigMap that does not exist
// is known to be empty (memory QoS off), not unknown.
func (c *configWatch) settle() {
	for _, w := range c.keys {
		if !w.h.Known() && len(w.inf.GetStore().List()) == 0 {
			c.apply(w, nil)
		}
	}
}

// doc is the SLO configuration in force: each key's last good value.
func (c *configWatch) doc() sloconfig.Doc {
	return sloconfig.Doc{ResourceQoS: c.resQoS.Current(), CPUBurst: c.burst.Current(), Namespaces: c.nsQoS.Current()}
}

// held says why memory QoS files must be left as they are: "" when every
// watched value is known.
func (c *configWatch) held() string {
	var why []string
	for _, w := range c.keys {
		if !w.h.Known() {
			why = append(why, fmt.Sprintf("no good value of ConfigMap %s/%s key %s is known yet", c.ns, w.name, w.key))
		}
	}
	return strings.Join(why, "; ")
}

// namedConfigMap watches one ConfigMap, namespace-scoped as the agent's Role
// allows (a field selector on the name narrows list and watch alike).
func namedConfigMap(client kubeclient.Interface, ns, name string) cache.ListerWatcher {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return kubeclient.ListWatch(client, kubeclient.ConfigMaps, ns, sel)
}

func asConfigMap(obj any) *corev1.ConfigMap {
	cm, _ := obj.(*corev1.ConfigMap)
	return cm
}

func (c *configWatch) apply(w watchedKey, cm *corev1.ConfigMap) {
	raw, rv := "", ""
	if cm != nil {
		raw, rv = cm.Data[w.key], cm.ResourceVersion
	}
	err := w.h.Update(raw)
	where := fmt.Sprintf("ConfigMap %s/%s key %s", c.ns, w.name, w.key)
	c.mu.Lock()
	if err != nil {
		c.errs[w.id()] = fmt.Sprintf("%s: %v", where, err)
	} else {
		delete(c.errs, w.id()) // by key: one ConfigMap holds two watched keys
	}
	c.mu.Unlock()
	switch {
	case err != nil && w.h.Known():
		msg := fmt.Sprintf("%s: %v; the last good configuration stays in force", where, err)
		c.log.Warn("invalid configuration", "configMap", c.ns+"/"+w.name, "key", w.key, "err", err)
		c.events.onObject(configMapRef(cm, c.ns, w.name), corev1.EventTypeWarning, "ConfigInvalid", msg)
	case err != nil:
		msg := fmt.Sprintf("%s: %v; no good configuration is known yet, so memory QoS files are left as they are until one arrives", where, err)
		c.log.Warn("invalid configuration and none saved: memory QoS held", "configMap", c.ns+"/"+w.name, "key", w.key, "err", err)
		c.events.onObject(configMapRef(cm, c.ns, w.name), corev1.EventTypeWarning, "ConfigInvalid", msg)
	default:
		if cm == nil {
			c.log.Info("configuration removed: its settings are off", "configMap", c.ns+"/"+w.name)
		} else {
			c.log.Info("configuration in force", "configMap", c.ns+"/"+w.name, "resourceVersion", cm.ResourceVersion)
		}
		c.save(w, raw, rv)
	}
	c.poke()
}

// save records a value just accepted, unless it is the one saved already
// (a resync, a restart): at rest the agent writes nothing. A new version of
// the same text is saved, so that the file says which version is in force.
func (c *configWatch) save(w watchedKey, raw, rv string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.saved.Values[w.id()]; ok && v.Raw == raw && v.ResourceVersion == rv {
		return
	}
	next := savedConfig{Values: map[string]savedValue{}}
	for k, v := range c.saved.Values {
		next.Values[k] = v
	}
	next.Values[w.id()] = savedValue{Raw: raw, ResourceVersion: rv, Accepted: time.Now().UTC().Truncate(time.Second)}
	if err := next.save(c.dir); err != nil {
		c.log.Warn("cannot save the configuration in force; a restart while it is malformed would wait for a good one", "err", err)
		return
	}
	c.saved = next
}

// lastError describes the malformed ConfigMaps, "" when none is.
func (c *configWatch) lastError() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	msgs := make([]string, 0, len(c.errs))
	for _, m := range c.errs {
		msgs = append(msgs, m)
	}
	sort.Strings(msgs)
	return strings.Join(msgs, "; ")
}

func configMapRef(cm *corev1.ConfigMap, ns, name string) *corev1.ObjectReference {
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}
	if cm != nil {
		ref.UID, ref.ResourceVersion = cm.UID, cm.ResourceVersion
	}
	return ref
}
