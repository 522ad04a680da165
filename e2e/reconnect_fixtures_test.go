package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/e2e/peers"
	"github.com/mcpwatch/watcher/reconnect"
	"github.com/mcpwatch/watcher/subscriber"
)

// Fixtures of the reconnect tests: an MCP server that can go down and come
// back on the same address, a proxy that expires sessions, server-everything
// on a fixed port, and the test process's children.

// rcFreeAddr returns a 127.0.0.1 address that was free a moment ago, on a
// port below the kernel's ephemeral range: these tests leave the address
// unused for seconds while a server is "down", and a port from the range
// could meanwhile go to any process asking for port 0 (another test, another
// package's test binary), or a stale client of one could reach our server.
func rcFreeAddr(t testing.TB) string {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
				low = n
			}
		}
	}
	for range 100 {
		port := 10000 + rand.IntN(low-10000)
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			ln.Close()
			return ln.Addr().String()
		}
	}
	t.Fatalf("no free port below %d on 127.0.0.1", low)
	return ""
}

// rcServer is an mcp-go Streamable HTTP server (legacy notifications by
// broadcast) on a fixed address, which the test stops and starts again. Its
// resources survive a restart; its sessions do not.
type rcServer struct {
	t    testing.TB
	addr string

	mu    sync.Mutex
	texts map[string]string
	mcp   *server.MCPServer
	hs    *httptest.Server

	// hangPing makes the server hold every ping until the client gives up:
	// a half-open server.
	hangPing atomic.Bool
}

// newRCServer returns a stopped server on a free address; call start. It
// is stopped at the end of the test.
func newRCServer(t testing.TB) *rcServer {
	s := &rcServer{t: t, addr: rcFreeAddr(t), texts: map[string]string{}}
	t.Cleanup(s.stop)
	return s
}

// URL is the MCP endpoint, valid whether or not the server runs.
func (s *rcServer) URL() string { return "http://" + s.addr + "/mcp" }

// start serves a fresh MCP server (no sessions) on the fixed address.
func (s *rcServer) start() {
	s.t.Helper()
	m := server.NewMCPServer("rc", "1.0.0", server.WithResourceCapabilities(true, true))
	ln, err := net.Listen("tcp", s.addr)
	require.NoError(s.t, err, "listen on %s again", s.addr)
	hs := httptest.NewUnstartedServer(s.wrap(server.NewStreamableHTTPServer(m)))
	hs.Listener.Close()
	hs.Listener = ln
	s.mu.Lock()
	s.mcp = m
	for uri := range s.texts {
		s.add(m, uri)
	}
	s.hs = hs
	s.mu.Unlock()
	hs.Start()
}

// stop closes the listener and every connection; the address stays ours
// to start on again. Safe to call when stopped.
func (s *rcServer) stop() {
	s.mu.Lock()
	hs := s.hs
	s.hs, s.mcp = nil, nil
	s.mu.Unlock()
	if hs != nil {
		hs.CloseClientConnections()
		hs.Close()
	}
}

// set changes a resource's text without notifying.
func (s *rcServer) set(uri, text string) {
	s.mu.Lock()
	_, had := s.texts[uri]
	s.texts[uri] = text
	if !had && s.mcp != nil {
		s.add(s.mcp, uri)
	}
	s.mu.Unlock()
}

// update changes a resource's text and notifies every session.
func (s *rcServer) update(uri, text string) {
	s.set(uri, text)
	s.mu.Lock()
	m := s.mcp
	s.mu.Unlock()
	m.SendNotificationToAllClients(mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri})
}

// add registers uri on m; s.mu must be held.
func (s *rcServer) add(m *server.MCPServer, uri string) {
	m.AddResource(mcp.NewResource(uri, uri, mcp.WithMIMEType("text/plain")),
		func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			s.mu.Lock()
			text := s.texts[r.Params.URI]
			s.mu.Unlock()
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: text}}, nil
		})
}

// wrap holds pings while hangPing is set, until the client hangs up.
func (s *rcServer) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && s.hangPing.Load() {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct{ Method string }
			if json.Unmarshal(body, &msg) == nil && msg.Method == "ping" {
				<-r.Context().Done()
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// rcProxy is a reverse proxy in front of an MCP server that can expire the
// client's session: requests carrying an expired id reach the server with
// an id it never issued, so the server itself answers as it does for an
// unknown session (mcp-go stateful: 404; server-everything: 400).
type rcProxy struct {
	URL     string
	answers chan int // the server's status for each request with an expired id

	mu      sync.Mutex
	last    string
	expired map[string]bool
}

// newRCProxy proxies to base (scheme://host, no path); the client uses
// p.URL + path. It is closed at the end of the test.
func newRCProxy(t testing.TB, base string) *rcProxy {
	u, err := url.Parse(base)
	require.NoError(t, err)
	p := &rcProxy{answers: make(chan int, 100), expired: map[string]bool{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ModifyResponse = func(resp *http.Response) error {
		if strings.HasPrefix(resp.Request.Header.Get("Mcp-Session-Id"), "expired-") {
			select {
			case p.answers <- resp.StatusCode:
			default:
			}
		} else if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			p.mu.Lock()
			p.last = id
			p.mu.Unlock()
		}
		return nil
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			p.mu.Lock()
			if p.expired[id] {
				r.Header.Set("Mcp-Session-Id", "expired-"+id)
			}
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	p.URL = hs.URL
	return p
}

// expire makes the session the server handed out last unknown to it from
// now on, and returns its id.
func (p *rcProxy) expire(t testing.TB) string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	require.NotEmpty(t, p.last, "the proxy has seen no session id yet")
	p.expired[p.last] = true
	return p.last
}

// answer waits for the server's status code for a request with an expired id.
func (p *rcProxy) answer(t testing.TB) int {
	t.Helper()
	select {
	case code := <-p.answers:
		return code
	case <-time.After(waitFor):
		t.Fatal("no request with the expired session reached the server")
		return 0
	}
}

// rcNode is a node process of server-everything over Streamable HTTP on a
// fixed port.
type rcNode struct {
	cmd    *exec.Cmd
	exited chan struct{}
	out    *logs
}

// rcStartEverything starts server-everything (Streamable HTTP) on addr and
// blocks until it accepts connections. It is killed at the end of the test.
func rcStartEverything(t testing.TB, addr string) *rcNode {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	entry := filepath.Join(peers.NodeModules(t), "@modelcontextprotocol", "server-everything", "dist", "index.js")
	n := &rcNode{exited: make(chan struct{}), out: &logs{}}
	n.cmd = exec.Command("node", "--require", filepath.Join(repoRoot(), "e2e", "peers", "localhost.cjs"), entry, peers.StreamableHTTP)
	n.cmd.Env = append(os.Environ(), "PORT="+port)
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	require.NoError(t, n.cmd.Start())
	go func() {
		defer close(n.exited)
		_ = n.cmd.Wait()
	}()
	t.Cleanup(n.kill)
	require.Eventuallyf(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 30*time.Second, 20*time.Millisecond, "server-everything did not listen on %s; output:\n%s", addr, n.out)
	return n
}

// kill SIGKILLs the process group and waits for the process. Idempotent.
func (n *rcNode) kill() {
	_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
	<-n.exited
}

// rcChildren returns the pids of the test process's live child processes
// (zombies not yet reaped are left out).
func rcChildren(t testing.TB) map[int]string {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	require.NoError(t, err)
	out := map[int]string{}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited
		}
		for _, field := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(field)
			stat, err := os.ReadFile("/proc/" + field + "/stat")
			if err != nil || rcZombie(stat) {
				continue
			}
			exe, _ := os.Readlink("/proc/" + field + "/exe")
			out[pid] = exe
		}
	}
	return out
}

// rcZombie reports whether a /proc/PID/stat line is a zombie's.
func rcZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// rcChildPid waits until exactly one child of the test process runs exe
// (other than the ones in not), and returns its pid.
func rcChildPid(t testing.TB, exe string, not ...int) int {
	t.Helper()
	var pid int
	require.Eventuallyf(t, func() bool {
		var found []int
	next:
		for p, e := range rcChildren(t) {
			for _, n := range not {
				if p == n {
					continue next
				}
			}
			if e == exe {
				found = append(found, p)
			}
		}
		if len(found) == 1 {
			pid = found[0]
		}
		return len(found) == 1
	}, waitFor, 10*time.Millisecond, "no single child process running %s", exe)
	return pid
}

// rcStatus returns the status of server name.
func rcStatus(t testing.TB, r *running, name string) subscriber.Status {
	t.Helper()
	for _, s := range r.Status() {
		if s.Server == name {
			return s
		}
	}
	t.Fatalf("no server %s in the status", name)
	return subscriber.Status{}
}

// rcWaitState waits until server name's supervisor state satisfies ok and
// returns it.
func rcWaitState(t testing.TB, r *running, name string, what string, ok func(reconnect.State) bool) reconnect.State {
	t.Helper()
	var st reconnect.State
	require.Eventuallyf(t, func() bool {
		st = rcStatus(t, r, name).State
		return ok(st)
	}, waitFor, 5*time.Millisecond, "server %s never reached: %s", name, what)
	return st
}

// rcBackingOff is a state predicate: backing off after at least n failed
// attempts in a row.
func rcBackingOff(n int) func(reconnect.State) bool {
	return func(st reconnect.State) bool { return st.Phase == reconnect.PhaseBackoff && st.Attempt >= n }
}
