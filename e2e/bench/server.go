package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// contentSize is the size of every resource's text.
const contentSize = 1024

// padding fills a text up to contentSize after its version prefix.
var padding = strings.Repeat("x", contentSize)

// text is the content of a resource at version v: "v<v> " then padding, 1 KiB.
func text(v uint64) string {
	var b [24]byte
	p := append(b[:0], 'v')
	p = strconv.AppendUint(p, v, 10)
	p = append(p, ' ')
	return string(p) + padding[len(p):]
}

// resource is one URI of a benchServer.
type resource struct {
	uri      string
	ver      atomic.Uint64 // the version a read returns
	reads    atomic.Int64
	inflight atomic.Int32
	maxIn    atomic.Int32 // most reads ever in flight at once
}

// benchServer is an MCP server over loopback Streamable HTTP (mcp-go, both
// eras; the watcher picks 2026-07-28), or over stdio in a child process
// (runStdioServerChild). Every resource is a 1 KiB text carrying its
// version. Stop and Start make an outage on the same address (HTTP only).
type benchServer struct {
	name  string
	res   []*resource
	byURI map[string]*resource

	// renotify makes every read send a notification for the URI it read
	// (after bumping its version), so the watcher always has one more read
	// to do: a closed loop at the watcher's own pace.
	renotify atomic.Bool
	// onListen, when set, is called each time a client opens
	// subscriptions/listen.
	onListen atomic.Pointer[func()]
	// stdio marks a server run by runStdioServerChild: mcp-go's stdio
	// transport neither tags listen notifications with the subscription id
	// (notify does) nor has a legacy GET stream (notify broadcasts to the
	// initialized session when no listen is open).
	stdio bool
	mcp   *server.MCPServer // set for stdio

	mu     sync.Mutex
	addr   string
	hs     *http.Server
	served chan struct{} // closed when hs.Serve returned
	listen map[server.ClientSession]any
	stop   chan struct{} // closed by Stop: unblocks notification sends
}

// newBenchServer serves n resources bench://<name>/r<i> on a free loopback
// port. The caller must call Stop.
func newBenchServer(name string, n int) (*benchServer, error) {
	s := newResources(name, n)
	s.addr = "127.0.0.1:0"
	if err := s.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// newResources is a server of n resources bench://<name>/r<i>, not serving.
func newResources(name string, n int) *benchServer {
	s := &benchServer{name: name, byURI: make(map[string]*resource, n)}
	for i := range n {
		r := &resource{uri: fmt.Sprintf("bench://%s/r%05d", name, i)}
		r.ver.Store(1)
		s.res = append(s.res, r)
		s.byURI[r.uri] = r
	}
	return s
}

// URL is the Streamable HTTP endpoint.
func (s *benchServer) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "http://" + s.addr + "/mcp"
}

// URIs lists the resources' URIs.
func (s *benchServer) URIs() []string {
	out := make([]string, len(s.res))
	for i, r := range s.res {
		out[i] = r.uri
	}
	return out
}

// Start (re)starts serving on the server's address with a fresh MCP server
// that knows no sessions: a restart after Stop.
func (s *benchServer) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hs != nil {
		return errors.New("bench server already running")
	}
	// Go listeners set SO_REUSEADDR, so the address of a stopped server is
	// free again at once.
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("bench server %s: listen on %s: %w", s.name, s.addr, err)
	}
	s.addr = ln.Addr().String()
	s.listen = map[server.ClientSession]any{}
	s.stop = make(chan struct{})

	m := s.newMCPServer()
	s.hs = &http.Server{Handler: server.NewStreamableHTTPServer(m), ReadHeaderTimeout: 10 * time.Second}
	s.served = make(chan struct{})
	go func(hs *http.Server, done chan struct{}) {
		defer close(done)
		_ = hs.Serve(ln)
	}(s.hs, s.served)
	return nil
}

// newMCPServer is a fresh mcp-go server over s's resources, with hooks that
// track open subscriptions/listen streams (and their request ids).
func (s *benchServer) newMCPServer() *server.MCPServer {
	hooks := &server.Hooks{}
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, id any, _ *mcp.SubscriptionsListenRequest) {
		s.mu.Lock()
		s.listen[server.ClientSessionFromContext(ctx)] = id
		s.mu.Unlock()
		if f := s.onListen.Load(); f != nil {
			(*f)()
		}
	})
	hooks.AddAfterSubscriptionsListen(func(ctx context.Context, _ any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		s.mu.Lock()
		delete(s.listen, server.ClientSessionFromContext(ctx))
		s.mu.Unlock()
	})
	m := server.NewMCPServer("bench-"+s.name, "1.0.0", server.WithResourceCapabilities(true, false), server.WithHooks(hooks))
	for _, r := range s.res {
		m.AddResource(mcp.NewResource(r.uri, r.uri, mcp.WithMIMEType("text/plain")), s.read)
	}
	return m
}

// Stop closes the listener and every connection, and waits for the serve
// loop. Reconnecting clients get "connection refused" until Start.
func (s *benchServer) Stop() {
	s.mu.Lock()
	hs, served, stop := s.hs, s.served, s.stop
	s.hs = nil
	s.listen = map[server.ClientSession]any{}
	s.mu.Unlock()
	if hs == nil {
		return
	}
	close(stop)
	_ = hs.Close()
	<-served
}

func (s *benchServer) read(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	r := s.byURI[req.Params.URI]
	if r == nil {
		return nil, mcp.ErrResourceNotFound
	}
	in := r.inflight.Add(1)
	defer r.inflight.Add(-1)
	for {
		m := r.maxIn.Load()
		if in <= m || r.maxIn.CompareAndSwap(m, in) {
			break
		}
	}
	r.reads.Add(1)
	v := r.ver.Load()
	if s.renotify.Load() {
		r.ver.Add(1)
		s.notify(ctx, r.uri)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.uri, MIMEType: "text/plain", Text: text(v)}}, nil
}

// Bump makes the next read of uri return a new version and returns it.
func (s *benchServer) Bump(uri string) uint64 { return s.byURI[uri].ver.Add(1) }

// Notify sends notifications/resources/updated for uri on every open
// subscriptions/listen stream, blocking while a stream's queue is full
// (mcp-go's holds 100) until ctx ends or the server stops. It reports
// whether some stream took it.
func (s *benchServer) Notify(ctx context.Context, uri string) bool { return s.notify(ctx, uri) }

func (s *benchServer) notify(ctx context.Context, uri string) bool {
	params := mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}}
	s.mu.Lock()
	stop := s.stop
	type stream struct {
		cs server.ClientSession
		id any
	}
	var streams [4]stream
	list := streams[:0]
	for cs, id := range s.listen {
		list = append(list, stream{cs, id})
	}
	s.mu.Unlock()
	if s.stdio && len(list) == 0 {
		// Legacy: the watcher subscribed with resources/subscribe.
		s.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationResourceUpdated), params.AdditionalFields)
		return true
	}
	sent := false
	for _, st := range list {
		p := params
		if s.stdio {
			p.Meta = map[string]any{mcp.MetaKeySubscriptionID: st.id}
		}
		n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: mcp.MethodNotificationResourceUpdated, Params: p,
		}}
		select {
		case st.cs.NotificationChannel() <- n:
			sent = true
		case <-ctx.Done():
		case <-stop:
		}
	}
	return sent
}

// Listening reports how many subscriptions/listen streams are open.
func (s *benchServer) Listening() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listen)
}

// reads sums the reads of every resource.
func (s *benchServer) reads() int64 {
	var n int64
	for _, r := range s.res {
		n += r.reads.Load()
	}
	return n
}

// startServers starts n bench servers of m resources each; on error it
// stops those it started.
func startServers(prefix string, n, m int) ([]*benchServer, error) {
	var out []*benchServer
	for i := range n {
		s, err := newBenchServer(fmt.Sprintf("%s%03d", prefix, i), m)
		if err != nil {
			stopServers(out)
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func stopServers(ss []*benchServer) {
	for _, s := range ss {
		s.Stop()
	}
}
