package nrt

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// Publisher keeps the node's NodeResourceTopology equal to the latest object
// handed to Set: it creates it if missing, else reads it and updates it when
// it differs (create, get and update are all the agent's role allows). Writes
// are at least MinInterval apart, so a burst of changes costs one write; an
// unchanged object is read again every Recheck, in case someone deleted or
// edited it. Every write stamps AnnotationHeartbeat, and the object is
// written at least every Heartbeat even when unchanged. Failures are retried
// with a backoff and never stop the agent.
type Publisher struct {
	client      dynamic.NamespaceableResourceInterface
	MinInterval time.Duration // default 1s
	Recheck     time.Duration // default 1m
	Heartbeat   time.Duration // default 1m; 0: only when something changed
	log         *slog.Logger

	mu   sync.Mutex
	want *Object
	wake chan struct{}

	// Published is signalled after every successful sync (for tests).
	Published func(wrote bool)
}

// NewPublisher writes through dyn.
func NewPublisher(dyn dynamic.Interface, log *slog.Logger) *Publisher {
	return &Publisher{client: dyn.Resource(GVR), MinInterval: time.Second, Recheck: time.Minute, Heartbeat: time.Minute,
		log: log, wake: make(chan struct{}, 1)}
}

// Set makes o the object to publish. It never blocks.
func (p *Publisher) Set(o *Object) {
	p.mu.Lock()
	p.want = o
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run publishes until ctx ends.
func (p *Publisher) Run(ctx context.Context) {
	var synced []byte // the JSON of the object last found or made equal on the server
	// lastBeat is the heartbeat last found or written on the server: a
	// restarted agent whose object is recent writes nothing.
	var lastWrite, lastCheck, lastBeat time.Time
	var lastErr string
	backoff := time.Duration(0)
	tick := p.Recheck
	if p.Heartbeat > 0 {
		tick = min(tick, p.Heartbeat)
	}
	timer := time.NewTimer(tick)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-timer.C:
			timer.Reset(tick)
		}
		p.mu.Lock()
		want := p.want
		p.mu.Unlock()
		if want == nil {
			continue
		}
		raw, _ := json.Marshal(want)
		now := time.Now()
		beat := p.Heartbeat > 0 && now.Sub(lastBeat) >= p.Heartbeat
		if bytes.Equal(raw, synced) && now.Sub(lastCheck) < p.Recheck && !beat {
			continue
		}
		if wait := lastWrite.Add(p.MinInterval).Sub(now); wait > 0 {
			resetTimer(timer, wait)
			continue
		}
		wrote, beatAt, err := p.sync(ctx, want)
		lastCheck = time.Now()
		if err != nil {
			synced = nil
			if err.Error() != lastErr {
				p.log.Warn("cannot publish NodeResourceTopology", "name", want.Metadata.Name, "err", err)
				lastErr = err.Error()
			}
			backoff = min(max(2*backoff, time.Second), 30*time.Second)
			resetTimer(timer, backoff)
			continue
		}
		lastErr, backoff, synced, lastBeat = "", 0, raw, beatAt
		if wrote {
			lastWrite = lastCheck
		}
		if p.Published != nil {
			p.Published(wrote)
		}
	}
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	select {
	case <-t.C:
	default:
	}
	t.Reset(d)
}

// sync makes the server's object match want, with a heartbeat at most
// Heartbeat old, and says whether it wrote and the heartbeat now on the
// server.
func (p *Publisher) sync(ctx context.Context, want *Object) (bool, time.Time, error) {
	now := time.Now().UTC().Truncate(time.Second)
	stamped := *want
	stamped.Metadata.Annotations = maps.Clone(want.Metadata.Annotations)
	if stamped.Metadata.Annotations == nil {
		stamped.Metadata.Annotations = map[string]string{}
	}
	stamped.Metadata.Annotations[AnnotationHeartbeat] = now.Format(time.RFC3339)
	wantU, err := toUnstructured(&stamped)
	if err != nil {
		return false, time.Time{}, err
	}
	cur, err := p.client.Get(ctx, want.Metadata.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = p.client.Create(ctx, wantU, metav1.CreateOptions{FieldManager: "locus"})
		return err == nil, now, err
	}
	if err != nil {
		return false, time.Time{}, err
	}
	beat, beatErr := time.Parse(time.RFC3339, cur.GetAnnotations()[AnnotationHeartbeat])
	recent := beatErr == nil && (p.Heartbeat <= 0 || time.Since(beat) < p.Heartbeat)
	if same, err := ours(cur, want); err != nil || same && recent {
		return false, beat, err
	}
	want = &stamped
	cur.Object["zones"] = wantU.Object["zones"]
	labels := cur.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range want.Metadata.Labels {
		labels[k] = v
	}
	cur.SetLabels(labels)
	ann := cur.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	for k, v := range want.Metadata.Annotations {
		ann[k] = v
	}
	cur.SetAnnotations(ann)
	_, err = p.client.Update(ctx, cur, metav1.UpdateOptions{FieldManager: "locus"})
	return err == nil, now, err
}

// ours says whether the server's object already holds what the agent owns
// in want: the zones, its label and its annotation. Anything else on the
// object (other labels, top-level attributes) is someone else's.
func ours(cur *unstructured.Unstructured, want *Object) (bool, error) {
	raw, err := json.Marshal(cur.Object)
	if err != nil {
		return false, err
	}
	var got Object
	if err := json.Unmarshal(raw, &got); err != nil {
		return false, nil // unreadable: rewrite it
	}
	norm := Object{APIVersion: want.APIVersion, Kind: want.Kind, Zones: got.Zones,
		Metadata: Metadata{Name: got.Metadata.Name, Labels: pick(got.Metadata.Labels, want.Metadata.Labels),
			Annotations: pick(got.Metadata.Annotations, want.Metadata.Annotations)}}
	a, _ := json.Marshal(norm)
	b, _ := json.Marshal(want)
	return bytes.Equal(a, b), nil
}

// pick keeps the keys of have that want has too.
func pick(have, want map[string]string) map[string]string {
	var out map[string]string
	for k := range want {
		if v, ok := have[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

func toUnstructured(o *Object) (*unstructured.Unstructured, error) {
	raw, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// PublishNow syncs the latest object at once, whatever MinInterval says:
// for an agent that reconciles once and exits.
func (p *Publisher) PublishNow(ctx context.Context) error {
	p.mu.Lock()
	want := p.want
	p.mu.Unlock()
	if want == nil {
		return nil
	}
	_, _, err := p.sync(ctx, want)
	return err
}
