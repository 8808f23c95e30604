package kubetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the throw-away credentials of one control plane: a CA that signs the
// apiserver's serving certificate and the admin's client certificate (the apiserver
// trusts it as --client-ca-file), and the service-account signing key.
type pki struct {
	caCert    *x509.Certificate
	caKey     *ecdsa.PrivateKey
	caPEM     []byte
	serverPEM []byte
	serverKey []byte
	adminPEM  []byte
	adminKey  []byte
	saKeyPEM  []byte
}

// certValidity outlives any test run; the CA dies with the temp dir.
const certValidity = 24 * time.Hour

func newPKI() (*pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := template(pkix.Name{CommonName: "locus-kubetest-ca"})
	caTmpl.IsCA = true
	caTmpl.BasicConstraintsValid = true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	p := &pki{caCert: caCert, caKey: caKey, caPEM: pemBlock("CERTIFICATE", caDER)}

	server := template(pkix.Name{CommonName: "kube-apiserver"})
	server.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	server.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	server.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
	if p.serverPEM, p.serverKey, err = p.issue(server); err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}

	// Organisation system:masters is the group that RBAC lets do anything.
	admin := template(pkix.Name{CommonName: "kubetest-admin", Organization: []string{"system:masters"}})
	admin.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if p.adminPEM, p.adminKey, err = p.issue(admin); err != nil {
		return nil, fmt.Errorf("admin certificate: %w", err)
	}

	// The apiserver signs service-account tokens with RSA (RS256) only.
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	p.saKeyPEM = pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey))
	return p, nil
}

func template(subject pkix.Name) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

// issue signs tmpl with the CA and returns the certificate and a fresh key, both PEM.
func (p *pki) issue(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER), nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

// pkiFiles are the paths the apiserver's flags point at.
type pkiFiles struct {
	ca, serverCert, serverKey, saKey string
}

func (p *pki) write(dir string) (pkiFiles, error) {
	f := pkiFiles{
		ca:         filepath.Join(dir, "ca.crt"),
		serverCert: filepath.Join(dir, "apiserver.crt"),
		serverKey:  filepath.Join(dir, "apiserver.key"),
		saKey:      filepath.Join(dir, "sa.key"),
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return f, err
	}
	for path, data := range map[string][]byte{
		f.ca: p.caPEM, f.serverCert: p.serverPEM, f.serverKey: p.serverKey, f.saKey: p.saKeyPEM,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return f, err
		}
	}
	return f, nil
}
