package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// browser starts a headless Chromium with a fresh profile, stopped and
// removed at cleanup. A missing Chromium fails the test, naming the package.
func browser(t *testing.T) context.Context {
	t.Helper()
	var bin string
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Fatal("no chromium on PATH: install the Debian package chromium (apt-get install chromium)")
	}
	profile, err := os.MkdirTemp("", "locus-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Chromium's children can still write there for a moment after it stops.
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("cannot remove the browser profile %s", profile)
	})
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(bin),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 900))
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// step runs one browser action with a deadline of its own (a deadline on
// the first Run would stop the whole browser).
func step[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
	return v
}

const webShared = head + `workloads:
- name: web
  cgroup: pods/web
  qosClass: LS
  resources: {limits: {cpu: "4"}}
- name: batch
  cgroup: pods/batch
  qosClass: BE
`

// The /ui page in a real browser: the map of the fixture machine, and a
// workload's CPUs taking its colour once the agent pins it, without a reload.
func TestUIInBrowser(t *testing.T) {
	if inGuest() {
		t.Skip("the NUMA test guest has no browser; this test runs on the host (go test ./pkg/agent)")
	}
	shape := fixture.MemoryOnly // 2 sockets, 3 nodes (one memory-only), 16 cores, 32 threads
	tree := newCgroupTree(t, cgroup.V2, false, "0-31")
	tree.mkcg("pods/web", "pods/batch")
	tree.set("", "pods/web", "memory.numa_stat", "anon N0=805306368 N1=268435456 N2=0\nfile N0=0 N1=0 N2=0")
	h := newHarness(t, tree, webShared, func(o *Options) { o.SysfsRoot = sysfs(t, shape) })
	h.reconcile()
	base := serveUI(t, h)
	ctx := browser(t)
	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"/ui")); err != nil {
		t.Fatalf("browser: open %s/ui: %v", base, err)
	}
	step(t, ctx, "wait for the map", chromedp.WaitVisible("svg.locus-map"))
	counts := step(t, ctx, "count the map's parts", chromedp.Evaluate[map[string]int](`({
		nodes: document.querySelectorAll("#map .numa-node").length,
		cores: document.querySelectorAll("#map .core").length,
		cpus: document.querySelectorAll("#map rect.cpu").length,
		sockets: document.querySelectorAll("#map .socket").length})`))
	if want := map[string]int{"nodes": 3, "cores": 16, "cpus": 32, "sockets": 2}; fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("the page draws %v, want %v", counts, want)
	}
	fillsJS := `Object.fromEntries([...document.querySelectorAll("#map rect.cpu")].map(e => [e.dataset.cpu, e.getAttribute("fill") + " " + e.dataset.kind + " " + e.dataset.owner]))`
	before := step(t, ctx, "read the CPU colours", chromedp.Evaluate[map[string]string](fillsJS))

	h.writeConfig(strings.Replace(webShared, `resources: {limits: {cpu: "4"}}`,
		"resources: {limits: {cpu: \"4\"}}\n  annotations: {cpuset-scheduler: \"true\"}", 1))
	h.reconcile()
	pinned := h.checkpoint().Assignments["web"].CPUs
	if pinned.Size() != 4 {
		t.Fatalf("web pinned to %q, want 4 CPUs", pinned)
	}
	var sel []string
	for _, id := range pinned.List() {
		sel = append(sel, fmt.Sprintf(`document.getElementById("cpu-%d").dataset.owner === "web"`, id))
	}
	// The page refreshes itself every second: wait for it, do not reload.
	step(t, ctx, "wait for web's CPUs to change owner", chromedp.Poll[chromedp.Void](strings.Join(sel, " && "),
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	after := step(t, ctx, "read the CPU colours again", chromedp.Evaluate[map[string]string](fillsJS))
	for _, id := range pinned.List() {
		k := fmt.Sprint(id)
		if !strings.HasSuffix(after[k], " exclusive web") || strings.Fields(after[k])[0] == strings.Fields(before[k])[0] {
			t.Errorf("CPU %d was %q, is %q: want web's own colour", id, before[k], after[k])
		}
	}
	state := step(t, ctx, "read the refresh state", chromedp.Evaluate[string](`document.getElementById("state").textContent`))
	if !strings.HasPrefix(state, "live") {
		t.Errorf("page state %q, want live", state)
	}
	shot := step(t, ctx, "take a screenshot", chromedp.FullScreenshot(100)) // 100: PNG
	path := filepath.Join(t.ArtifactDir(), "ui.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (kept with go test -artifacts -outputdir DIR)", path)
}
