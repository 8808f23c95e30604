package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/kube/nrt"
)

// Against a real API server: n reports listed in pages of p took ⌈n/p⌉
// requests (the server honours the limit at the version the list asks
// for), and give n entries, each at its version and holding its report
// decoded; the informer built on that list syncs with every report.
func TestReportsListedInPages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	cp := kubetest.Start(t)
	cp.InstallNodeResourceTopologyCRD(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := cp.Dynamic.Resource(nrt.GVR)
	const n, pageSize = 7, 3
	want := map[string]*nrt.Object{}
	versions := map[string]string{}
	for i := range n {
		o := report(t, fmt.Sprintf("n%d", i), nil)
		created, err := client.Create(ctx, toUnstructured(t, o), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want[o.Metadata.Name] = o
		versions[o.Metadata.Name] = created.GetResourceVersion()
	}

	reports, err := NewReports(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, requests, err := listPages(ctx, reports, pageSize)
	if err != nil {
		t.Fatal(err)
	}
	if wantRequests := (n + pageSize - 1) / pageSize; requests != wantRequests {
		t.Errorf("%d reports in pages of %d took %d requests, want %d", n, pageSize, requests, wantRequests)
	}
	if list.ResourceVersion == "" {
		t.Error("the list has no resource version for the watch to start from")
	}
	if len(list.Items) != n {
		t.Fatalf("the list has %d entries, want %d", len(list.Items), n)
	}
	for _, item := range list.Items {
		e := item.Object.(*nrtEntry)
		if e.version != versions[e.name] {
			t.Errorf("%s: version %q, want %q", e.name, e.version, versions[e.name])
		}
		r := e.take()
		if r == nil || r.err != nil || r.o == nil {
			t.Fatalf("%s: received %+v, want the report decoded", e.name, r)
		}
		// Compared as JSON: a quantity decoded keeps its text, one built
		// does not.
		got, _ := json.Marshal(r.o)
		sent, _ := json.Marshal(want[e.name])
		if string(got) != string(sent) {
			t.Errorf("%s: the decoded report differs from the one created:\n got %s\nwant %s", e.name, got, sent)
		}
		delete(want, e.name)
	}
	if len(want) != 0 {
		t.Errorf("reports not listed: %v", want)
	}

	inf := reportInformer(reports, pageSize)
	if err := inf.SetTransform(slimmer{store: inf.GetStore}.slim); err != nil {
		t.Fatal(err)
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	if keys := inf.GetStore().ListKeys(); len(keys) != n {
		t.Errorf("the informer's store holds %d reports, want %d", len(keys), n)
	}
}

// A report beyond the bounds is refused with an error naming it and the
// field; the node is then as one without a report.
func TestReportBeyondBoundsRefused(t *testing.T) {
	o := report(t, "big", nil)
	zones := o.Zones
	for len(o.Zones) <= maxReportZones {
		o.Zones = append(o.Zones, zones...)
	}
	r := decodeOne(t, o, texts{})
	if r.err == nil || r.o != nil || !strings.Contains(r.err.Error(), `"big"`) || !strings.Contains(r.err.Error(), "zones") {
		t.Fatalf("a report of %d zones: %+v, want an error naming it and its zones", len(o.Zones), r)
	}

	o = report(t, "loud", nil)
	o.Metadata.Annotations["x"] = strings.Repeat("x", maxReportAnnotationBytes)
	if r := decodeOne(t, o, texts{}); r.err == nil || !strings.Contains(r.err.Error(), "metadata.annotations") {
		t.Fatalf("a report of over %d bytes of annotations: %+v, want an error naming them", maxReportAnnotationBytes, r)
	}
	if r := decodeOne(t, report(t, "fine", nil), texts{}); r.err != nil {
		t.Fatalf("a report of the test machine: %v", r.err)
	}
}

// Reports of the same machine listed together hold their CPU topology
// text once; a different text is kept apart.
func TestListedReportsShareTexts(t *testing.T) {
	shared := texts{}
	text := func(name string) string {
		t.Helper()
		r := decodeOne(t, report(t, name, nil), shared)
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.o.Metadata.Annotations[nrt.AnnotationCPUTopology]
	}
	a, b := text("a"), text("b")
	if len(a) < minSharedText || a != b {
		t.Fatalf("the test machine's topology text: %d bytes, the same on both nodes: %v", len(a), a == b)
	}
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("two reports of the same machine hold two copies of its topology text")
	}
	o := report(t, "c", nil)
	o.Metadata.Annotations[nrt.AnnotationCPUTopology] += " "
	r := decodeOne(t, o, shared)
	if got := r.o.Metadata.Annotations[nrt.AnnotationCPUTopology]; got != a+" " {
		t.Error("a report with a text of its own was given another's")
	}
}
