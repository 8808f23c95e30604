package kubetest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func (cp *ControlPlane) startEtcd(ctx context.Context, clientPort, peerPort int) error {
	cp.EtcdURL = fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	args := []string{
		"--name=kubetest",
		"--data-dir=" + filepath.Join(cp.Dir, "etcd"),
		"--listen-client-urls=" + cp.EtcdURL,
		"--advertise-client-urls=" + cp.EtcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=kubetest=" + peerURL,
		// The data dies with the test: durability only costs time on a shared disk.
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
	p, err := startProcess("etcd", cp.Binaries.Etcd, args, nil, filepath.Join(cp.Dir, "etcd.log"))
	if err != nil {
		return err
	}
	cp.etcd = p
	err = p.waitReady(ctx, func(ctx context.Context) error {
		return httpOK(ctx, http.DefaultClient, cp.EtcdURL+"/health", `"health":"true"`)
	})
	if err != nil && portConflict(p) {
		return fmt.Errorf("%w: %v", errPortTaken, err)
	}
	return err
}

// apiserverArgs are the flags of an apiserver alone: no controller-manager creates
// service-account tokens and no node controller taints nodes, so the admission
// plugins that wait for them are off; privileged pods are allowed because the
// node agent's DaemonSet is one; the DRA API is served.
func (cp *ControlPlane) apiserverArgs(port int, f pkiFiles) []string {
	return []string{
		"--etcd-servers=" + cp.EtcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file=" + f.serverCert,
		"--tls-private-key-file=" + f.serverKey,
		"--client-ca-file=" + f.ca,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f.saKey,
		"--service-account-signing-key-file=" + f.saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		// Nothing serves the kubernetes Service's endpoints; do not maintain them.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		// Dynamic Resource Allocation is beta and off by default in v1.33:
		// the gate and the API group let the tests create ResourceSlices and
		// ResourceClaims, as a cluster with DRA drivers serves them.
		"--feature-gates=DynamicResourceAllocation=true",
		"--runtime-config=resource.k8s.io/v1beta1=true",
	}
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, port int, f pkiFiles) error {
	cp.APIServerURL = fmt.Sprintf("https://127.0.0.1:%d", port)
	cfg := &rest.Config{
		Host: cp.APIServerURL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: cp.pki.caPEM, CertData: cp.pki.adminPEM, KeyData: cp.pki.adminKey,
		},
	}
	if err := cp.setAdminConfig(cfg); err != nil {
		return err
	}
	args := cp.apiserverArgs(port, f)
	p, err := startProcess("kube-apiserver", cp.Binaries.KubeAPIServer, args, nil,
		filepath.Join(cp.Dir, "kube-apiserver.log"))
	if err != nil {
		return err
	}
	cp.apiserver = p
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	err = p.waitReady(ctx, func(ctx context.Context) error {
		if err := httpOK(ctx, httpClient, cp.APIServerURL+"/readyz", "ok"); err != nil {
			return err
		}
		// The system namespaces are created by a post-start hook that /readyz does
		// not wait for; tests put objects in kube-system straight away.
		return httpOK(ctx, httpClient, cp.APIServerURL+"/api/v1/namespaces/kube-system", `"name":"kube-system"`)
	})
	if err != nil && portConflict(p) {
		return fmt.Errorf("%w: %v", errPortTaken, err)
	}
	return err
}

func (cp *ControlPlane) setAdminConfig(cfg *rest.Config) error {
	// Benchmarks create thousands of objects: client-side throttling would measure
	// the client, not the code under test.
	cfg.QPS, cfg.Burst = 1000, 2000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cp.Config, cp.Client, cp.Dynamic = cfg, client, dyn
	return nil
}

func (cp *ControlPlane) writeAdminKubeconfig() error {
	cp.Kubeconfig = filepath.Join(cp.Dir, "kubeconfig")
	return WriteKubeconfig(cp.Kubeconfig, cp.Config)
}

// WriteKubeconfig writes a kubeconfig file for cfg (server, CA and client certificate
// or token), for programs under test that take --kubeconfig.
func WriteKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kubetest"] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos["kubetest"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
	}
	kc.Contexts["kubetest"] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: "kubetest"}
	kc.CurrentContext = "kubetest"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// Kubectl returns a kubectl command (the binary built with the control plane) acting
// as the admin; set Stdin or read the output as with any exec.Cmd.
func (cp *ControlPlane) Kubectl(args ...string) *exec.Cmd {
	cmd := exec.Command(cp.Binaries.Kubectl, append([]string{"--kubeconfig=" + cp.Kubeconfig}, args...)...)
	// kubectl keeps a discovery cache under $HOME; keep it inside this control plane.
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(cp.Dir, "home"))
	return cmd
}

// httpOK checks that url answers 200 with a body containing want.
func httpOK(ctx context.Context, client *http.Client, url, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
