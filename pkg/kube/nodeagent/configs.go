package nodeagent

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/memqos"
)

// configWatch keeps the two ConfigMaps' memory QoS settings: the last value
// that parsed stays in force, and a malformed one is a Warning event on the
// ConfigMap and a log line, both naming the field.
type configWatch struct {
	ns        string
	informers []cache.SharedIndexInformer
	resQoS    *memqos.Holder[string] // resource-qos-config as written, once the agent accepts it
	nsQoS     *memqos.Holder[memqos.NamespaceConfig]
	events    *eventPoster
	log       *slog.Logger
	poke      func()

	mu   sync.Mutex
	errs map[string]string // by ConfigMap name: the error in force
}

// watchedKey is one ConfigMap key and where its value goes.
type watchedKey struct {
	name, key string
	update    func(string) error
}

func newConfigWatch(o SourceOptions, events *eventPoster, poke func()) *configWatch {
	checked := func(raw string) (string, error) { return raw, agent.CheckResourceQoSConfig(raw) }
	c := &configWatch{ns: o.ConfigNamespace, resQoS: memqos.NewHolder(checked, ""), nsQoS: memqos.NewNamespaceHolder(),
		events: events, log: o.Logger, poke: poke, errs: map[string]string{}}
	for _, w := range []watchedKey{
		{o.ResourceQoSConfigMap, memqos.ConfigKeyResourceQoS, c.resQoS.Update},
		{o.PodQoSConfigMap, memqos.ConfigKeyNamespaces, c.nsQoS.Update},
	} {
		inf := cache.NewSharedIndexInformer(namedConfigMap(o.Client, o.ConfigNamespace, w.name), &corev1.ConfigMap{}, 0, cache.Indexers{})
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { c.apply(w, asConfigMap(obj)) },
			UpdateFunc: func(old, cur any) {
				if o, n := asConfigMap(old), asConfigMap(cur); o == nil || n == nil || o.ResourceVersion != n.ResourceVersion {
					c.apply(w, n)
				}
			},
			// A deleted ConfigMap is an empty one: memory QoS off.
			DeleteFunc: func(any) { c.apply(w, nil) },
		})
		c.informers = append(c.informers, inf)
	}
	return c
}

// namedConfigMap watches one ConfigMap, namespace-scoped as the agent's Role
// allows (a field selector on the name narrows list and watch alike).
func namedConfigMap(client kubernetes.Interface, ns, name string) cache.ListerWatcher {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return client.CoreV1().ConfigMaps(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return client.CoreV1().ConfigMaps(ns).Watch(ctx, o)
		},
	}
}

func asConfigMap(obj any) *corev1.ConfigMap {
	cm, _ := obj.(*corev1.ConfigMap)
	return cm
}

func (c *configWatch) apply(w watchedKey, cm *corev1.ConfigMap) {
	raw := ""
	if cm != nil {
		raw = cm.Data[w.key]
	}
	err := w.update(raw)
	where := fmt.Sprintf("ConfigMap %s/%s key %s", c.ns, w.name, w.key)
	c.mu.Lock()
	if err != nil {
		c.errs[w.name] = fmt.Sprintf("%s: %v", where, err)
	} else {
		delete(c.errs, w.name)
	}
	c.mu.Unlock()
	switch {
	case err != nil:
		msg := fmt.Sprintf("%s: %v; the last good configuration stays in force", where, err)
		c.log.Warn("invalid configuration", "configMap", c.ns+"/"+w.name, "key", w.key, "err", err)
		c.events.onObject(configMapRef(cm, c.ns, w.name), corev1.EventTypeWarning, "ConfigInvalid", msg)
	case cm == nil:
		c.log.Info("configuration removed: its settings are off", "configMap", c.ns+"/"+w.name)
	default:
		c.log.Info("configuration in force", "configMap", c.ns+"/"+w.name, "resourceVersion", cm.ResourceVersion)
	}
	c.poke()
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
