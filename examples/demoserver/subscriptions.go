package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// subscriptions tracks who wants which URI, on both protocol eras, and sends
// them notifications. Safe for concurrent use.
//
// mcp-go v1.2.1 has no per-URI fan-out of its own: SendNotificationToAllClients
// reaches every legacy session whatever it subscribed, and never reaches a
// 2026-07-28 listen stream with resources/updated. So hooks record legacy
// subscriptions per session id and open listens per (session, request id),
// and the notifications are pushed to exactly those.
type subscriptions struct {
	logger *slog.Logger
	srv    *server.MCPServer

	mu      sync.Mutex
	legacy  map[string]map[string]bool // session id -> subscribed URIs
	listens map[listenKey]*listen
}

// listenKey names one open subscriptions/listen request.
type listenKey struct {
	session server.ClientSession
	id      string // fmt of the JSON-RPC id
}

// listen is one open subscriptions/listen stream.
type listen struct {
	session     server.ClientSession
	id          any // the request id, echoed in _meta
	uris        map[string]bool
	listChanged bool
}

func newSubscriptions(logger *slog.Logger) *subscriptions {
	return &subscriptions{logger: logger, legacy: map[string]map[string]bool{}, listens: map[listenKey]*listen{}}
}

// attach gives the registry the server to send through. Call it once, before
// serving.
func (s *subscriptions) attach(srv *server.MCPServer) { s.srv = srv }

// hooks returns the server hooks that keep the registry current.
func (s *subscriptions) hooks() *server.Hooks {
	h := &server.Hooks{}
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		sess := server.ClientSessionFromContext(ctx)
		if sess == nil {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.legacy[sess.SessionID()] == nil {
			s.legacy[sess.SessionID()] = map[string]bool{}
		}
		s.legacy[sess.SessionID()][req.Params.URI] = true
		s.logger.Info("subscribed", "session", sess.SessionID(), "uri", req.Params.URI)
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			s.mu.Lock()
			delete(s.legacy[sess.SessionID()], req.Params.URI)
			s.mu.Unlock()
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
		s.mu.Lock()
		delete(s.legacy, sess.SessionID())
		s.mu.Unlock()
	})
	h.AddBeforeSubscriptionsListen(func(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
		sess := server.ClientSessionFromContext(ctx)
		if sess == nil {
			return
		}
		l := &listen{session: sess, id: id, uris: map[string]bool{}, listChanged: req.Params.Notifications.ResourcesListChanged}
		for _, u := range req.Params.Notifications.ResourceSubscriptions {
			l.uris[u] = true
		}
		s.mu.Lock()
		s.listens[listenKey{sess, fmt.Sprint(id)}] = l
		s.mu.Unlock()
		s.logger.Info("listening", "id", id, "uris", req.Params.Notifications.ResourceSubscriptions)
	})
	h.AddAfterSubscriptionsListen(func(ctx context.Context, id any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		s.endListen(ctx, id)
	})
	h.AddOnError(func(ctx context.Context, id any, method mcp.MCPMethod, _ any, _ error) {
		if method == mcp.MethodSubscriptionsListen {
			s.endListen(ctx, id)
		}
	})
	return h
}

func (s *subscriptions) endListen(ctx context.Context, id any) {
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		s.mu.Lock()
		delete(s.listens, listenKey{sess, fmt.Sprint(id)})
		s.mu.Unlock()
	}
}

// resourceUpdated sends notifications/resources/updated for uri to every
// legacy session that subscribed it and every listen that names it. It never
// blocks: a full client queue drops the notification (logged).
func (s *subscriptions) resourceUpdated(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sid, uris := range s.legacy {
		if !uris[uri] {
			continue
		}
		err := s.srv.SendNotificationToSpecificClient(sid, string(mcp.MethodNotificationResourceUpdated), map[string]any{"uri": uri})
		if err != nil {
			s.logger.Warn("cannot notify a session", "session", sid, "uri", uri, "err", err)
		}
	}
	for _, l := range s.listens {
		if l.uris[uri] {
			s.push(l, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri})
		}
	}
}

// listChanged sends notifications/resources/list_changed to the listens the
// transport itself does not reach. The server's own broadcast (made by
// AddResources and DeleteResources) covers legacy sessions and Streamable HTTP
// listens, whose sessions filter and tag; stdio and SSE sessions do neither,
// and are not initialized in the 2026-07-28 era, so they get it from here.
func (s *subscriptions) listChanged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listens {
		if _, filters := l.session.(server.SessionWithSubscriptionFilter); l.listChanged && !filters {
			s.push(l, mcp.MethodNotificationResourcesListChanged, nil)
		}
	}
}

// push queues a notification on the listen's stream, tagged with its
// subscription id (the Streamable HTTP transport tags too, with the same id;
// stdio and SSE do not). Called with s.mu held, which also keeps the listen
// open meanwhile: endListen waits for it.
func (s *subscriptions) push(l *listen, method string, params map[string]any) {
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: method,
			Params: mcp.NotificationParams{
				Meta:             map[string]any{mcp.MetaKeySubscriptionID: l.id},
				AdditionalFields: params,
			},
		},
	}
	select {
	case l.session.NotificationChannel() <- n:
	default:
		s.logger.Warn("client queue full, notification dropped", "method", method, "id", l.id)
	}
}
