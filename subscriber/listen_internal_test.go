package subscriber

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/config"
)

func TestIDKeyComparesAcrossJSONTypes(t *testing.T) {
	for _, same := range [][2]any{
		{float64(3), json.Number("3")},
		{float64(3), "3"},
		{float64(3), int64(3)},
		{float64(3), mcp.NewRequestId(int64(3))},
		{"abc", "abc"},
	} {
		require.Equal(t, idKey(same[0]), idKey(same[1]), "%#v vs %#v", same[0], same[1])
	}
	require.NotEqual(t, idKey(float64(3)), idKey(float64(4)))
	require.NotEqual(t, idKey("abc"), idKey("abd"))
	require.Equal(t, "", idKey(nil))
}

func notification(method string, meta map[string]any, fields map[string]any) mcp.JSONRPCNotification {
	return mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: method, Params: mcp.NotificationParams{Meta: meta, AdditionalFields: fields}}}
}

// The acknowledgement's subscription id filters resources/updated, whatever
// JSON type each carries; an untagged notification passes.
func TestOnNotificationFiltersBySubscriptionID(t *testing.T) {
	var got []string
	s := &mcpSession{done: make(chan struct{}), acks: make(chan []string, 1), notify: func(u string) { got = append(got, u) }}
	s.onNotification(notification(methodAcknowledged, map[string]any{subscriptionIDKey: float64(7)},
		map[string]any{"notifications": map[string]any{"resourceSubscriptions": []any{"test://a"}}}))
	require.Equal(t, []string{"test://a"}, <-s.acks)
	updated := string(mcp.MethodNotificationResourceUpdated)
	s.onNotification(notification(updated, map[string]any{subscriptionIDKey: json.Number("7")}, map[string]any{"uri": "test://a"}))
	s.onNotification(notification(updated, map[string]any{subscriptionIDKey: float64(6)}, map[string]any{"uri": "test://stale"}))
	s.onNotification(notification(updated, nil, map[string]any{"uri": "test://untagged"}))
	require.Equal(t, []string{"test://a", "test://untagged"}, got)
}

// A server-sent notifications/cancelled naming the current listen ends the
// session (mcp-go's Listen would keep blocking on stdio); one naming another
// request does not.
func TestOnNotificationServerCancelledListen(t *testing.T) {
	s := &mcpSession{done: make(chan struct{}), acks: make(chan []string, 1), notify: func(string) {}}
	s.onNotification(notification(methodAcknowledged, map[string]any{subscriptionIDKey: float64(4)}, nil))
	cancelled := string(mcp.MethodNotificationCancelled)
	s.onNotification(notification(cancelled, nil, map[string]any{"requestId": float64(9)}))
	require.NoError(t, s.Err())
	s.onNotification(notification(cancelled, nil, map[string]any{"requestId": "4", "reason": "shutting down"}))
	select {
	case <-s.Done():
	default:
		t.Fatal("the session is not lost")
	}
	require.ErrorContains(t, s.Err(), "shutting down")
}

func TestNamedIn(t *testing.T) {
	sts := []*uriState{{sub: config.Subscription{URI: "test://a"}}, {sub: config.Subscription{URI: "test://ab"}}}
	require.Equal(t, []*uriState{sts[1]}, namedIn(`subscribing to "test://ab": no`, sts))
	require.Equal(t, []*uriState{sts[0]}, namedIn("bad uri test://a", sts))
	require.Empty(t, namedIn("no such resource", sts))
}
