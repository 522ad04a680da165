package publish

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files.
type testPKI struct {
	caFile, serverCert, serverKey, clientCert, clientKey string
	pool                                                 *x509.CertPool
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "watcher test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)

	issue := func(serial int64, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalECPrivateKey(key)
		require.NoError(t, err)
		certFile = writePEM(t, dir, name+".pem", "CERTIFICATE", der)
		keyFile = writePEM(t, dir, name+"-key.pem", "EC PRIVATE KEY", keyDER)
		return certFile, keyFile
	}
	p := testPKI{caFile: writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER), pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.serverCert, p.serverKey = issue(2, "server", x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = issue(3, "client", x509.ExtKeyUsageClientAuth)
	return p
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
	return path
}

func TestTLSWithCredentials(t *testing.T) {
	pki := newTestPKI(t)
	cert, err := tls.LoadX509KeyPair(pki.serverCert, pki.serverKey)
	require.NoError(t, err)
	const user, password = "watcher", "s3cret-pa55word"
	ns := startServer(t, t.TempDir(), -1, func(o *server.Options) {
		o.TLS, o.TLSVerify, o.TLSTimeout = true, true, 5
		o.TLSConfig = &tls.Config{
			Certificates: []tls.Certificate{cert},
			ClientCAs:    pki.pool,
			ClientAuth:   tls.RequireAndVerifyClientCert,
			MinVersion:   tls.VersionTLS12,
		}
		o.Username, o.Password = user, password
	})
	logs := &logBuf{}
	opts := testOptions(ns.ClientURL(), logs)
	opts.NATS.User, opts.NATS.Password = user, password
	opts.NATS.TLS.CAFile = pki.caFile
	opts.NATS.TLS.CertFile, opts.NATS.TLS.KeyFile = pki.clientCert, pki.clientKey
	opts.LogEvents = true
	p := startPublisher(t, opts)
	p.waitReady(t)
	ev := newEvent("docs", uriN(1), 1, "over TLS")
	require.NoError(t, p.Publish(context.Background(), ev))
	p.waitDrained(t, 10*time.Second)

	msgs := readStream(t, ns.ClientURL(), "MCP_EVENTS",
		nats.UserInfo(user, password), nats.RootCAs(pki.caFile), nats.ClientCert(pki.clientCert, pki.clientKey))
	require.Len(t, msgs, 1)
	require.Equal(t, ev.ID, msgs[0].ev.ID)
	require.NotContains(t, logs.String(), password)
	require.NoError(t, p.stop(t))
	require.NotContains(t, logs.String(), password)
}

func TestWrongPasswordKeepsRetrying(t *testing.T) {
	ns := startServer(t, t.TempDir(), -1, func(o *server.Options) { o.Username, o.Password = "watcher", "right" })
	logs := &logBuf{}
	opts := testOptions(ns.ClientURL(), logs)
	opts.NATS.User, opts.NATS.Password = "watcher", "wrong-password-value"
	opts.ShutdownTimeout = 50 * time.Millisecond
	p := startPublisher(t, opts)
	require.NoError(t, p.Publish(context.Background(), newEvent("docs", uriN(1), 1, "x")))
	require.False(t, p.Ready())
	require.NoError(t, p.stop(t))
	require.False(t, strings.Contains(logs.String(), "wrong-password-value"))
	require.Equal(t, 1, p.Stats().Pending)
}
