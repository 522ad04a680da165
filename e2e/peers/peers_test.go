package peers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	architecture = "demo://resource/static/document/architecture.md"
	waitFor      = 20 * time.Second
)

// connect starts and initializes c; it is closed at the end of the test.
func connect(t *testing.T, c *client.Client) *client.Client {
	t.Helper()
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
		ClientInfo:      mcp.Implementation{Name: "peers-test", Version: "1"},
	}})
	require.NoError(t, err)
	return c
}

func readText(t *testing.T, c *client.Client, uri string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	res, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	require.Truef(t, ok, "%s: contents are %T, want text", uri, res.Contents[0])
	return tc.Text
}

// checkEverything checks the legacy era, the subscribe capability and the
// architecture document's exact text.
func checkEverything(t *testing.T, c *client.Client) {
	t.Helper()
	require.Equal(t, "2025-11-25", c.ProtocolVersion())
	caps := c.GetServerCapabilities().Resources
	require.NotNil(t, caps)
	require.True(t, caps.Subscribe)
	want, err := os.ReadFile(filepath.Join(NodeModules(t), "@modelcontextprotocol/server-everything/dist/docs/architecture.md"))
	require.NoError(t, err)
	require.Equal(t, string(want), readText(t, c, architecture))
}

func TestEverythingStdio(t *testing.T) {
	command, args := Everything(t)
	c := connect(t, client.NewClient(transport.NewStdio(command, nil, args...)))
	checkEverything(t, c)
}

func TestEverythingStreamableHTTP(t *testing.T) {
	base := EverythingHTTP(t, StreamableHTTP)
	require.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), base)
	hc, err := client.NewStreamableHttpClient(base + "/mcp")
	require.NoError(t, err)
	checkEverything(t, connect(t, hc))
}

func TestEverythingSSE(t *testing.T) {
	base := EverythingHTTP(t, SSE)
	sc, err := client.NewSSEMCPClient(base + "/sse")
	require.NoError(t, err)
	checkEverything(t, connect(t, sc))
}

func TestModernServer(t *testing.T) {
	url, stop := ModernServer(t, "UPDATE_MS=50")
	hc, err := client.NewStreamableHttpClient(url)
	require.NoError(t, err)
	notes := make(chan mcp.JSONRPCNotification, 64)
	hc.OnNotification(func(n mcp.JSONRPCNotification) {
		select {
		case notes <- n:
		default:
		}
	})
	c := connect(t, hc)
	require.Equal(t, mcp.ProtocolVersion20260728, c.ProtocolVersion())

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	disc, err := c.Discover(ctx, mcp.DiscoverRequest{})
	require.NoError(t, err)
	require.Contains(t, disc.SupportedVersions, mcp.ProtocolVersion20260728)
	require.True(t, strings.HasPrefix(readText(t, c, "test://modern/a"), "test://modern/a counter="))

	stopListen, err := c.ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{"test://modern/b"}}, nil)
	require.NoError(t, err)
	defer stopListen()
	var ackID any
	for {
		select {
		case n := <-notes:
			switch n.Method {
			case string(mcp.MethodNotificationSubscriptionsAcknowledged):
				ackID = n.Params.Meta[mcp.MetaKeySubscriptionID]
				require.NotNil(t, ackID)
				continue
			case string(mcp.MethodNotificationResourceUpdated):
				require.NotNil(t, ackID, "updated before the acknowledgement")
				require.Equal(t, "test://modern/b", n.Params.AdditionalFields["uri"])
				require.Equal(t, ackID, n.Params.Meta[mcp.MetaKeySubscriptionID])
			default:
				continue
			}
		case <-ctx.Done():
			t.Fatal("no tagged notifications/resources/updated from the modern server")
		}
		break
	}
	stopListen()
	stop()
	stop() // idempotent
}
