package kubetest_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/internal/kubetest"
)

// chartAppVersion is deploy/helm/locus/Chart.yaml's appVersion: the image tag
// the chart installs by default.
func chartAppVersion(t *testing.T) string {
	t.Helper()
	var chart struct{ Version, AppVersion string }
	b, err := os.ReadFile(kubetest.RepoPath(t, chartDir+"/Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatal(err)
	}
	if chart.Version != chart.AppVersion {
		t.Fatalf("Chart.yaml: version %q, appVersion %q: a release gives both the image tag", chart.Version, chart.AppVersion)
	}
	return chart.AppVersion
}

// One number names a release everywhere: the chart's version and appVersion (the
// image tag it installs, which make images builds) and the newest CHANGELOG entry.
func TestChartVersionIsTheImageTagAndTheChangelogs(t *testing.T) {
	v := chartAppVersion(t)
	log, err := os.ReadFile(kubetest.RepoPath(t, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## \[([^\]]+)\]`).FindAllSubmatch(log, -1)
	if len(m) == 0 || string(m[0][1]) != v {
		var got []string
		for _, h := range m {
			got = append(got, string(h[1]))
		}
		t.Errorf("CHANGELOG.md: the newest section is %v, want the chart's version %s", got, v)
	}
	out := helm(t, "", "template", "locus", kubetest.RepoPath(t, chartDir), "--set", "scheduler.enabled=true")
	for _, img := range []string{"ghcr.io/locus-project/locus:" + v, "ghcr.io/locus-project/locus-scheduler:" + v} {
		if !strings.Contains(out, `image: "`+img+`"`) {
			t.Errorf("the chart does not install %s by default", img)
		}
	}
}

// A wrong value fails at render time, before anything reaches the cluster, with a
// message that names it (values.schema.json).
func TestHelmChartRefusesBadValuesNamingThem(t *testing.T) {
	chart := kubetest.RepoPath(t, chartDir)
	bin := os.Getenv("LOCUS_HELM")
	if bin == "" {
		bin = kubetest.RepoPath(t, ".cache/bin/helm")
	}
	for _, tc := range []struct{ set, want string }{
		{"agent.cgroupDriver=systemdd", "/agent/cgroupDriver"},
		{"agent.reservedCPUs=0-x", "/agent/reservedCPUs"},
		{"agent.reservedCPUs=0;1", "/agent/reservedCPUs"},
		{"agent.metricsPort=70000", "/agent/metricsPort"},
		{"agent.stateDir=var/lib/locus", "/agent/stateDir"},
		{"agent.reservedCpus=0", "reservedCpus"}, // a misspelt name is not silently ignored
		{"image.pullPolicy=Sometimes", "/image/pullPolicy"},
		{"scheduler.scoringStrategy=Spread", "/scheduler/scoringStrategy"},
		{"scheduler.nrtMaxAge=3mins", "/scheduler/nrtMaxAge"},
		{"scheduler.replicas=0", "/scheduler/replicas"},
		{"apiServer.port=6443", "apiServer.host is required"},
		{"sloConfig.manage=overwrite", "/sloConfig/manage"},
		{"defaultConfigs.resourceQOS.create=false", "defaultConfigs"}, // the old values are refused, not ignored
		{"scheduler.image.repository=me/sched", "image"},
		{"image.agent.digest=sha256:xyz", "/image/agent/digest"},
		{"image.scheduler.tag=a b", "/image/scheduler/tag"},
		{"agent.updateStrategy.type=Recreate", "/agent/updateStrategy/type"},
		{"agent.updateStrategy.rollingUpdate.maxSurge=1", "/agent/updateStrategy/rollingUpdate/maxSurge"},
		{"metrics.serviceMonitor.interval=30", "/metrics/serviceMonitor/interval"},
		{"metrics.serviceMonitor.enabled=true,metrics.service.enabled=false", "metrics.service.enabled"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			cmd := exec.Command(bin, "template", "locus", chart, "--set", tc.set)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err == nil {
				t.Fatalf("helm template --set %s: rendered", tc.set)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("helm template --set %s: the error does not name %s:\n%s", tc.set, tc.want, stderr.String())
			}
		})
	}
	// The values that look alike but are right still render.
	for _, ok := range []string{`agent.reservedCPUs=0\,64`, "agent.reservedCPUs=3", "agent.reservedCPUs=0-1\\,32-33",
		"scheduler.nrtMaxAge=90s", "scheduler.nrtMaxAge=1h30m", "agent.cgroupDriver="} {
		helm(t, "", "template", "locus", chart, "--set", ok)
	}
}

// `helm show readme` prints the chart's README, the one tools/chartreadme
// writes from the values (its own test keeps the file in step with them).
func TestHelmShowReadme(t *testing.T) {
	want, err := os.ReadFile(kubetest.RepoPath(t, chartDir+"/README.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := helm(t, "", "show", "readme", kubetest.RepoPath(t, chartDir))
	if strings.TrimSpace(got) != strings.TrimSpace(string(want)) || !strings.Contains(got, "| `sloConfig.manage` |") {
		t.Errorf("helm show readme printed %d bytes, not the chart's README.md (%d bytes)", len(got), len(want))
	}
}
