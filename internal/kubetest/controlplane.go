package kubetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// KeepEnv, when set to a non-empty value, keeps a stopped control plane's directory
// (logs, etcd data, kubeconfig) and prints where it is.
const KeepEnv = "LOCUS_KUBETEST_KEEP"

// ControlPlane is a running etcd and kube-apiserver on loopback, with no scheduler,
// controller-manager or kubelet: tests bind pods themselves (BindPod) and simulate
// nodes (CreateNode, or kwok through StartKwok).
type ControlPlane struct {
	Binaries Binaries
	// Dir holds everything of this control plane: certificates, etcd data, logs and
	// the admin kubeconfig. It is removed by Stop unless $LOCUS_KUBETEST_KEEP is set.
	Dir string
	// Kubeconfig is the path of a kubeconfig with the admin's credentials (group
	// system:masters), for kubectl, kwok and programs under test.
	Kubeconfig string
	// Config, Client and Dynamic act as the admin.
	Config  *rest.Config
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	// APIServerURL is https://127.0.0.1:PORT; EtcdURL is http://127.0.0.1:PORT.
	APIServerURL string
	EtcdURL      string

	pki       *pki
	etcd      *process
	apiserver *process
	mapper    mapperState
}

// startTimeout bounds the time etcd and the apiserver take to become ready:
// a loaded two-core machine can be slow.
const startTimeout = 90 * time.Second

// attempts covers the rare case of a free port being taken between the probe and the
// bind: each attempt picks new ports.
const attempts = 3

// New starts a control plane. Call Stop when done; Start does that for a test.
func New(ctx context.Context) (*ControlPlane, error) {
	bins, err := FindBinaries("")
	if err != nil {
		return nil, err
	}
	p, err := newPKI()
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		cp, err := start(ctx, bins, p)
		if err == nil {
			return cp, nil
		}
		if !errors.Is(err, errPortTaken) || attempt == attempts {
			return nil, err
		}
	}
}

// Start starts a control plane for one test and stops it when the test ends. A
// package whose tests share one control plane uses Main instead.
func Start(t testing.TB) *ControlPlane {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cp, err := New(ctx)
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("kubetest: %v", err)
		}
	})
	return cp
}

// Main runs a package's tests against one shared control plane, stored in *cp for
// them, and exits with their status. Use it from TestMain:
//
//	var cp *kubetest.ControlPlane
//	func TestMain(m *testing.M) { kubetest.Main(m, &cp) }
//
// When the control plane cannot start (the binaries are missing, say), it prints why
// and exits 1 without running any test.
func Main(m *testing.M, cp **ControlPlane) {
	started, err := New(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubetest: %v\n", err)
		os.Exit(1)
	}
	*cp = started
	code := m.Run()
	if err := started.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "kubetest: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func start(ctx context.Context, bins Binaries, p *pki) (cp *ControlPlane, err error) {
	dir, err := os.MkdirTemp("", "locus-kubetest-")
	if err != nil {
		return nil, err
	}
	cp = &ControlPlane{Binaries: bins, Dir: dir, pki: p}
	defer func() {
		if err != nil {
			// Keep the logs of a failed start only on request; the error quotes them.
			cp.stop(os.Getenv(KeepEnv) != "")
		}
	}()
	files, err := p.write(filepath.Join(dir, "pki"))
	if err != nil {
		return cp, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return cp, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()

	if err := cp.startEtcd(ctx, ports[0], ports[1]); err != nil {
		return cp, err
	}
	if err := cp.startAPIServer(ctx, ports[2], files); err != nil {
		return cp, err
	}
	if err := cp.writeAdminKubeconfig(); err != nil {
		return cp, err
	}
	return cp, nil
}

// Stop stops the apiserver, then etcd, and removes Dir unless $LOCUS_KUBETEST_KEEP is
// set. It is safe to call twice.
func (cp *ControlPlane) Stop() error {
	return cp.stop(os.Getenv(KeepEnv) != "")
}

func (cp *ControlPlane) stop(keep bool) error {
	cp.apiserver.stop(10 * time.Second)
	cp.etcd.stop(10 * time.Second)
	if cp.Dir == "" {
		return nil
	}
	if keep {
		fmt.Fprintf(os.Stderr, "kubetest: control plane files kept in %s\n", cp.Dir)
		return nil
	}
	err := os.RemoveAll(cp.Dir)
	cp.Dir = ""
	if err != nil {
		return fmt.Errorf("removing the control plane directory: %w", err)
	}
	return nil
}
