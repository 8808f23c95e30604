package nodeagent_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nrt"
)

// The content types, as client-go and the apiserver spell them.
const (
	protobufType = runtime.ContentTypeProtobuf
	jsonType     = runtime.ContentTypeJSON
)

// The agent's typed clients ask the apiserver for protobuf, JSON second, and
// send protobuf; the apiserver answers its pods, ConfigMaps, Node, DRA claims
// and slices and Events in protobuf, and the agent still pins a pod, posts its
// Event and publishes the NodeResourceTopology, which, a CRD, goes in JSON
// both ways. Without ProtobufConfig the Events are posted in JSON (client-go's
// Event methods), and this fails.
func TestAgentClientsSpeakProtobuf(t *testing.T) {
	n := newNode(t, cgroup.V2, false)
	var seen contentLog
	pod := n.create(boundPod("pinned"))
	cg := n.kubelet.ContainerCgroup(pod, "web")
	n.start(func(o *kubeOptions) { o.Config.Wrap(seen.wrap) })
	n.waitFileMatch(cg, "cpuset.cpus", "2 CPUs", func(s string) bool { c, err := cpuset.Parse(s); return err == nil && c.Size() == 2 })
	waitEvent(t, n.ns, "Pod", "pinned", corev1.EventTypeNormal, "CPUsAssigned")
	waitNRT(t, n.name, "listing the pinned pod", func(o *nrt.Object, _ nrt.CPUTopology) bool { return o != nil })

	byResource := map[string][]exchange{}
	for _, e := range seen.all() {
		if r := e.resource(); r != "" {
			byResource[r] = append(byResource[r], e)
		}
	}
	counts := map[string]int{}
	for r, es := range byResource {
		counts[r] = len(es)
	}
	t.Logf("the agent's requests by resource: %v", counts)
	for _, r := range []string{"pods", "configmaps", "nodes", "events"} {
		if len(byResource[r]) == 0 {
			t.Errorf("no request of the agent's for %s", r)
		}
	}
	if !slices.ContainsFunc(byResource["events"], func(e exchange) bool { return e.method == http.MethodPost }) {
		t.Errorf("the agent posted no Event through its client: %v", byResource["events"])
	}
	for r, es := range byResource {
		for _, e := range es {
			if r == nrt.GVR.Resource {
				if e.accept != jsonType || (e.sent != "" && e.sent != jsonType) || !strings.HasPrefix(e.answered, jsonType) {
					t.Errorf("%s: a CRD must go in JSON: %s", r, e)
				}
				continue
			}
			if !strings.HasPrefix(e.accept, protobufType+",") || !strings.Contains(e.accept, jsonType) {
				t.Errorf("%s: asks for %q, not protobuf then JSON: %s", r, e.accept, e)
			}
			if e.sent != "" && e.sent != protobufType && !strings.Contains(e.sent, "patch") {
				t.Errorf("%s: sends %q, not protobuf: %s", r, e.sent, e)
			}
			if e.status < 300 && !strings.HasPrefix(e.answered, protobufType) {
				t.Errorf("%s: answered in %q, not protobuf: %s", r, e.answered, e)
			}
		}
	}
}

// contentLog records what each request through a client asked for and sent,
// and what it was answered in.
type contentLog struct {
	mu sync.Mutex
	ex []exchange
}

type exchange struct {
	method, path           string
	accept, sent, answered string // Accept, and the request's and the answer's Content-Type
	status                 int
}

func (e exchange) String() string {
	return e.method + " " + e.path + " Accept " + e.accept + " Content-Type " + e.sent + " -> " + e.answered
}

// resource is the resource a request is about (/api/v1/namespaces/NS/pods
// → pods), "" for discovery.
func (e exchange) resource() string {
	parts := strings.Split(strings.Trim(e.path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return ""
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		return parts[2]
	}
	return parts[0]
}

func (l *contentLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		e := exchange{method: r.Method, path: r.URL.Path, accept: r.Header.Get("Accept"), sent: r.Header.Get("Content-Type")}
		resp, err := rt.RoundTrip(r)
		if err != nil {
			return resp, err
		}
		e.answered, e.status = resp.Header.Get("Content-Type"), resp.StatusCode
		l.mu.Lock()
		l.ex = append(l.ex, e)
		l.mu.Unlock()
		return resp, err
	})
}

func (l *contentLog) all() []exchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ex)
}
