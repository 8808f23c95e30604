package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// spec is an image of two fake binaries, one per platform.
func spec(t *testing.T) Spec {
	t.Helper()
	dir := t.TempDir()
	bins := map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(dir, arch)
		if err := os.WriteFile(p, []byte("binary for "+arch), 0o755); err != nil {
			t.Fatal(err)
		}
		bins["linux/"+arch] = p
	}
	return Spec{Name: "locus-scheduler", Version: "1.2.3", Revision: "abc123", Source: "https://example.com/locus",
		User: "65532:65532", Binaries: bins}
}

func archive(t *testing.T, s Spec, ref string) string {
	t.Helper()
	idx, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteArchive(&a, idx, tag); err != nil {
		t.Fatal(err)
	}
	idx2, _ := Build(s)
	if err := WriteArchive(&b, idx2, tag); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two builds of the same binaries differ: the images are not reproducible")
	}
	p := filepath.Join(t.TempDir(), "img.oci.tar")
	if err := os.WriteFile(p, a.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestArchiveHoldsEveryPlatformWithLabelsAndUser(t *testing.T) {
	s := spec(t)
	idx, ref, err := ReadArchive(archive(t, s, "ghcr.io/locus-project/locus-scheduler:1.2.3"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if ref != "ghcr.io/locus-project/locus-scheduler:1.2.3" {
		t.Errorf("archive names %q", ref)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range m.Manifests {
		got = append(got, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Architecture != d.Platform.Architecture || cfg.OS != "linux" {
			t.Errorf("%s: config says %s/%s", d.Platform, cfg.OS, cfg.Architecture)
		}
		if cfg.Config.User != "65532:65532" {
			t.Errorf("%s runs as %q, want 65532:65532", d.Platform, cfg.Config.User)
		}
		for k, want := range map[string]string{"org.opencontainers.image.version": "1.2.3",
			"org.opencontainers.image.revision": "abc123", "org.opencontainers.image.source": "https://example.com/locus"} {
			if cfg.Config.Labels[k] != want {
				t.Errorf("%s: label %s = %q, want %q", d.Platform, k, cfg.Config.Labels[k], want)
			}
		}
		if e := strings.Join(cfg.Config.Entrypoint, " "); e != "/usr/local/bin/locus-scheduler" {
			t.Errorf("%s: entrypoint %q", d.Platform, e)
		}
		layers, _ := img.Layers()
		if len(layers) != 1 {
			t.Errorf("%s: %d layers, want 1", d.Platform, len(layers))
		}
	}
	if strings.Join(got, " ") != "linux/amd64 linux/arm64" {
		t.Errorf("platforms %v", got)
	}
}

func TestSpecRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"no version", func(s *Spec) { s.Version = "" }, "no version"},
		{"no binary", func(s *Spec) { s.Binaries = nil }, "no binary"},
		{"name with a slash", func(s *Spec) { s.Name = "a/b" }, "bare binary name"},
		{"bad platform", func(s *Spec) { s.Binaries["windows"] = "x" }, `platform "windows"`},
		{"missing binary", func(s *Spec) { s.Binaries["linux/amd64"] = "/nonexistent" }, "/nonexistent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec(t)
			tc.edit(&s)
			if _, err := Build(s); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestPushToARegistry(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://") + "/team"
	a := archive(t, spec(t), "ghcr.io/locus-project/locus-scheduler:1.2.3")
	dst, err := Push(a, reg)
	if err != nil {
		t.Fatal(err)
	}
	if want := reg + "/locus-scheduler:1.2.3"; dst.Name() != want {
		t.Errorf("pushed to %s, want %s", dst, want)
	}
	idx, err := remote.Index(dst)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(dst, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"}))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := img.ConfigFile()
	if m, _ := idx.IndexManifest(); len(m.Manifests) != 2 || cfg.Architecture != "arm64" {
		t.Errorf("registry holds %d manifests, arm64 pull gave %s", len(m.Manifests), cfg.Architecture)
	}
}

// A push that fails says why in one line: what was wrong and what to do.
func TestPushFailuresAreOneClearLine(t *testing.T) {
	a := archive(t, spec(t), "ghcr.io/locus-project/locus-scheduler:1.2.3")
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials
	locked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
	}))
	defer locked.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedHost := strings.TrimPrefix(closed.URL, "http://")
	closed.Close()
	for _, tc := range []struct{ name, registry, want string }{
		{"no registry", "", "no registry: set REGISTRY"},
		{"bad registry", "Not A Registry!", `registry "Not A Registry!"`},
		{"unreachable", closedHost, "cannot reach registry " + closedHost},
		{"no credentials", strings.TrimPrefix(locked.URL, "http://"), "log in first (docker login"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Push(a, tc.registry, remote.WithRetryBackoff(remote.Backoff{Steps: 1}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			t.Log(err)
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}
