package main

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// beServer makes the re-executed test binary run the demo server's main.
const beServer = "DEMOSERVER_TEST_BE_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(beServer) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m,
		// mcp-go v1.2.1's SSE server serves each message on a context detached
		// from the request and the session, so a subscriptions/listen over SSE
		// never ends: not on the client's cancel, not on CloseSessions.
		goleak.IgnoreTopFunction("github.com/mark3labs/mcp-go/server.(*MCPServer).handleSubscriptionsListen"))
}

const waitFor = 10 * time.Second

// demoDir makes a directory with a markdown and a text file.
func demoDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.md"), []byte("# a v1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b v1\n"), 0o644))
	return dir
}

// notes collects a client's notifications without blocking its reader.
type notes chan mcp.JSONRPCNotification

func collect(c *client.Client) notes {
	ch := make(notes, 256)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		select {
		case ch <- n:
		default:
		}
	})
	return ch
}

// next waits for the next notification of method, skipping others.
func (ch notes) next(t *testing.T, method string) mcp.JSONRPCNotification {
	t.Helper()
	return ch.nextWhere(t, method, func(mcp.JSONRPCNotification) bool { return true })
}

// nextWhere waits for the next notification of method that ok accepts.
func (ch notes) nextWhere(t *testing.T, method string, ok func(mcp.JSONRPCNotification) bool) mcp.JSONRPCNotification {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case n := <-ch:
			if n.Method == method && ok(n) {
				return n
			}
		case <-deadline:
			t.Fatalf("no %s notification within %s", method, waitFor)
		}
	}
}

// stdioClient starts this test binary as the demo server over stdio and
// initializes a client; both are closed at cleanup.
func stdioClient(t *testing.T, dir string, opts ...client.ClientOption) (*client.Client, notes) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	tr := transport.NewStdioWithOptions(exe, []string{beServer + "=1"}, []string{"-dir", dir},
		transport.WithCommandStderrWriter(testWriter{t}))
	return startClient(t, client.NewClient(tr, opts...))
}

// startClient applies opts to c, starts and initializes it; it is closed at
// cleanup.
func startClient(t *testing.T, c *client.Client, opts ...client.ClientOption) (*client.Client, notes) {
	t.Helper()
	for _, o := range opts {
		o(c)
	}
	ch := collect(c)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		c.Close()
		cancel()
	})
	require.NoError(t, c.Start(ctx))
	ictx, icancel := context.WithTimeout(ctx, waitFor)
	defer icancel()
	_, err := c.Initialize(ictx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION,
		ClientInfo:      mcp.Implementation{Name: "demoserver-test", Version: "1"},
	}})
	require.NoError(t, err)
	return c, ch
}

// testWriter sends the server's stderr to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

func readText(t *testing.T, c *client.Client, uri string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	res, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	require.Truef(t, ok, "contents of %s are %T, want text", uri, res.Contents[0])
	require.Equal(t, uri, tc.URI)
	return tc.Text
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
}

func TestLegacyStdioSubscribe(t *testing.T) {
	dir := demoDir(t)
	c, ch := stdioClient(t, dir, client.WithLegacyProtocolOnly())
	require.Equal(t, "2025-11-25", c.ProtocolVersion())
	caps := c.GetServerCapabilities().Resources
	require.NotNil(t, caps)
	require.True(t, caps.Subscribe)
	require.True(t, caps.ListChanged)

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	list, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	require.NoError(t, err)
	mimes := map[string]string{}
	for _, r := range list.Resources {
		mimes[r.URI] = r.MIMEType
	}
	a, b := fileURI(filepath.Join(dir, "a.md")), fileURI(filepath.Join(dir, "b.txt"))
	require.Equal(t, map[string]string{a: "text/markdown", b: "text/plain"}, mimes)
	require.Equal(t, "# a v1\n", readText(t, c, a))

	require.NoError(t, c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: a}}))
	// b is not subscribed: its change must not be announced. Notifications
	// leave in order, so the first updated names a.
	write(t, dir, "b.txt", "b v2\n")
	write(t, dir, "a.md", "# a v2\n")
	n := ch.next(t, string(mcp.MethodNotificationResourceUpdated))
	require.Equal(t, a, n.Params.AdditionalFields["uri"])
	require.Equal(t, "# a v2\n", readText(t, c, a))
}

func TestModernStdioListen(t *testing.T) {
	dir := demoDir(t)
	c, ch := stdioClient(t, dir)
	require.Equal(t, mcp.ProtocolVersion20260728, c.ProtocolVersion())
	a := fileURI(filepath.Join(dir, "a.md"))
	listenAndCheck(t, c, ch, dir, a)
}

// listenAndCheck opens a listen for a (and list changes) and checks that an
// edit of a, not of b, arrives tagged, that a new file announces a list
// change, and that a binary file reads as a blob.
func listenAndCheck(t *testing.T, c *client.Client, ch notes, dir, a string) {
	t.Helper()
	stop, err := c.ListenAsync(context.Background(),
		mcp.SubscriptionFilter{ResourceSubscriptions: []string{a}, ResourcesListChanged: true},
		func(err error) { t.Errorf("listen: %v", err) })
	require.NoError(t, err)
	defer stop()

	ack := ch.next(t, string(mcp.MethodNotificationSubscriptionsAcknowledged))
	id := ack.Params.Meta[mcp.MetaKeySubscriptionID]
	require.NotNil(t, id, "acknowledgement without a subscription id")

	write(t, dir, "b.txt", "b v2\n")
	write(t, dir, "a.md", "# a v2\n")
	n := ch.next(t, string(mcp.MethodNotificationResourceUpdated))
	require.Equal(t, a, n.Params.AdditionalFields["uri"])
	require.Equal(t, id, n.Params.Meta[mcp.MetaKeySubscriptionID])
	require.Equal(t, "# a v2\n", readText(t, c, a))

	bin := []byte{0, 1, 2, 0xff}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.bin"), bin, 0o644))
	// On stdio mcp-go also broadcasts an untagged copy (its modern stdio
	// session counts as initialized); the tagged one must come too.
	ch.nextWhere(t, string(mcp.MethodNotificationResourcesListChanged), func(n mcp.JSONRPCNotification) bool {
		return n.Params.Meta[mcp.MetaKeySubscriptionID] == id
	})

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cURI := fileURI(filepath.Join(dir, "c.bin"))
	res, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: cURI}})
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	blob, ok := res.Contents[0].(mcp.BlobResourceContents)
	require.Truef(t, ok, "contents are %T, want a blob", res.Contents[0])
	require.Equal(t, base64.StdEncoding.EncodeToString(bin), blob.Blob)
	require.Equal(t, "application/octet-stream", blob.MIMEType)
}

// inProcessHTTP serves the demo over Streamable HTTP from this process.
func inProcessHTTP(t *testing.T, dir string) string {
	t.Helper()
	d, err := newDemo(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.watch(ctx) }()
	hs := httptest.NewServer(streamableHandler(d.srv))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		cancel()
		require.NoError(t, <-done)
	})
	return hs.URL + "/mcp"
}

func TestModernHTTPListen(t *testing.T) {
	dir := demoDir(t)
	url := inProcessHTTP(t, dir)
	hc, err := client.NewStreamableHttpClient(url)
	require.NoError(t, err)
	c, ch := startClient(t, hc)
	require.Equal(t, mcp.ProtocolVersion20260728, c.ProtocolVersion())
	listenAndCheck(t, c, ch, dir, fileURI(filepath.Join(dir, "a.md")))
}

func TestLegacyHTTPSubscribe(t *testing.T) {
	dir := demoDir(t)
	url := inProcessHTTP(t, dir)
	hc, err := client.NewStreamableHttpClient(url, transport.WithContinuousListening())
	require.NoError(t, err)
	c, ch := startClient(t, hc)
	require.Equal(t, "2025-11-25", c.ProtocolVersion())

	a := fileURI(filepath.Join(dir, "a.md"))
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: a}}))
	write(t, dir, "b.txt", "b v2\n")
	write(t, dir, "a.md", "# a v2\n")
	n := ch.next(t, string(mcp.MethodNotificationResourceUpdated))
	require.Equal(t, a, n.Params.AdditionalFields["uri"])
	require.Equal(t, "# a v2\n", readText(t, c, a))
}

// inProcessSSE serves the demo over HTTP+SSE from this process.
func inProcessSSE(t *testing.T, dir string) string {
	t.Helper()
	d, err := newDemo(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	watched, served := make(chan error, 1), make(chan error, 1)
	go func() { watched <- d.watch(ctx) }()
	go func() { served <- serveSSEOn(ctx, ln, d.srv) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-served)
		require.NoError(t, <-watched)
	})
	return "http://" + ln.Addr().String() + "/sse"
}

func TestSSE(t *testing.T) {
	t.Run("legacy", func(t *testing.T) {
		dir := demoDir(t)
		sc, err := client.NewSSEMCPClient(inProcessSSE(t, dir))
		require.NoError(t, err)
		c, ch := startClient(t, sc, client.WithLegacyProtocolOnly())
		require.Equal(t, "2025-11-25", c.ProtocolVersion())
		a := fileURI(filepath.Join(dir, "a.md"))
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: a}}))
		write(t, dir, "b.txt", "b v2\n")
		write(t, dir, "a.md", "# a v2\n")
		n := ch.next(t, string(mcp.MethodNotificationResourceUpdated))
		require.Equal(t, a, n.Params.AdditionalFields["uri"])
		require.Equal(t, "# a v2\n", readText(t, c, a))
	})
	t.Run("modern", func(t *testing.T) {
		dir := demoDir(t)
		sc, err := client.NewSSEMCPClient(inProcessSSE(t, dir))
		require.NoError(t, err)
		c, ch := startClient(t, sc)
		require.Equal(t, mcp.ProtocolVersion20260728, c.ProtocolVersion())
		listenAndCheck(t, c, ch, dir, fileURI(filepath.Join(dir, "a.md")))
	})
}

func TestMimeType(t *testing.T) {
	for name, want := range map[string]string{
		"x.md": "text/markdown", "x.JSON": "application/json", "x.yaml": "application/yaml",
		"x.png": "image/png", "noext": "application/octet-stream",
	} {
		require.Equal(t, want, mimeType(name, nil), name)
	}
	require.Equal(t, "text/plain", mimeType("noext", []byte("hello")))
}
