package notify_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"backupd/app/notify"
)

// selfSigned makes a certificate for 127.0.0.1 and localhost that signs
// itself, and a pool that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(42),
		Subject:               pkix.Name{CommonName: "backupd test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

var at = time.Date(2026, 11, 25, 13, 40, 0, 0, time.UTC)

func changedEvent(id int64, name string) notify.Event {
	return notify.Event{
		ID: "101", Kind: "config.changed", At: at, Trigger: "schedule",
		Device: &notify.Device{ID: id, Name: name, Host: "10.0.0.1", Platform: "cisco_ios", GroupPath: []string{"Sites", "Berlin"}},
		Backup: &notify.Backup{ID: "b2", PreviousID: "b1", StartedAt: at, LinesAdded: 3, LinesRemoved: 1},
		URL:    "https://backupd.example.net/devices/7/diff?from=b1&to=b2",
	}
}

func failedEvent(id int64, name string) notify.Event {
	return notify.Event{
		ID: "102", Kind: "backup.failed", At: at, Trigger: "retry",
		Device:  &notify.Device{ID: id, Name: name, Host: "10.0.0.2", Platform: "junos"},
		Failure: &notify.Failure{Stage: "login", Reason: "authentication refused", Consecutive: 3},
	}
}

func newServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
