package peers

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// startTimeout bounds how long a peer may take to accept connections.
	startTimeout = 30 * time.Second
	// stopGrace is how long a peer gets between SIGTERM and SIGKILL.
	stopGrace = 5 * time.Second

	everythingEntry = "@modelcontextprotocol/server-everything/dist/index.js"
	missingHint     = "run `make test` (it runs npm ci in e2e/)"
)

// Transports of server-everything, as its command line names them.
const (
	StreamableHTTP = "streamableHttp" // endpoint baseURL + "/mcp"
	SSE            = "sse"            // endpoint baseURL + "/sse"
)

// dir is the absolute path of this package's directory.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// NodeModules returns the absolute path of e2e/node_modules. It fails the test
// when the npm packages or node itself are missing.
func NodeModules(t testing.TB) string {
	t.Helper()
	nm := filepath.Join(dir(), "..", "node_modules")
	if _, err := os.Stat(filepath.Join(nm, filepath.FromSlash(everythingEntry))); err != nil {
		t.Fatalf("the npm packages the e2e tests need are not installed in %s: %s", nm, missingHint)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH: install Node.js 20 or newer, then %s", missingHint)
	}
	return nm
}

// Everything returns the command line that runs server-everything over stdio.
// The caller starts the process (e.g. as an MCP stdio client) and owns it.
func Everything(t testing.TB) (command string, args []string) {
	t.Helper()
	entry := filepath.Join(NodeModules(t), filepath.FromSlash(everythingEntry))
	return "node", []string{entry, "stdio"}
}

// EverythingHTTP starts server-everything on a free 127.0.0.1 port with
// transport StreamableHTTP or SSE, and returns its base URL
// (http://127.0.0.1:PORT, no path: the endpoint is baseURL+"/mcp" or
// baseURL+"/sse"). It blocks until the server accepts connections, and kills
// it at the end of the test.
func EverythingHTTP(t testing.TB, transport string) (baseURL string) {
	t.Helper()
	if transport != StreamableHTTP && transport != SSE {
		t.Fatalf("peers.EverythingHTTP: transport %q: use peers.StreamableHTTP or peers.SSE", transport)
	}
	entry := filepath.Join(NodeModules(t), filepath.FromSlash(everythingEntry))
	port := freePort(t)
	p := start(t, []string{"PORT=" + strconv.Itoa(port)},
		"--require", filepath.Join(dir(), "localhost.cjs"), entry, transport)
	t.Cleanup(p.stop)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p.waitDial(t, addr)
	return "http://" + addr
}

// ModernServer starts modern-server.mjs (protocol 2026-07-28 over Streamable
// HTTP; resources test://modern/a and test://modern/b, updated every
// UPDATE_MS, default 200) with env (KEY=VALUE) added, and returns its endpoint
// URL and a stop function. It blocks until the server listens. stop kills the
// server and waits for it; it is idempotent and also runs at the end of the
// test.
func ModernServer(t testing.TB, env ...string) (url string, stop func()) {
	t.Helper()
	NodeModules(t)
	env = append([]string{"PORT=0"}, env...)
	p := start(t, env, filepath.Join(dir(), "modern-server.mjs"))
	t.Cleanup(p.stop)
	select {
	case port := <-p.listening:
		return "http://127.0.0.1:" + port + "/mcp", p.stop
	case <-p.exited:
		t.Fatalf("modern-server.mjs exited before listening; its output:\n%s", p.output())
	case <-time.After(startTimeout):
		p.stop()
		t.Fatalf("modern-server.mjs did not listen within %s; its output:\n%s", startTimeout, p.output())
	}
	return "", nil
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// proc is a node process started by this package.
type proc struct {
	cmd       *exec.Cmd
	exited    chan struct{} // closed once cmd.Wait returned
	listening chan string   // the port of a "LISTENING <port>" line, once
	out       lockedBuffer  // stdout and stderr
	stopOnce  sync.Once
}

// start runs node with args in its own process group, env added to ours.
// Its output is kept and logged if the test fails.
func start(t testing.TB, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{exited: make(chan struct{}), listening: make(chan string, 1)}
	p.cmd = exec.Command("node", args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.Stderr = &p.out
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("node %s: %v", strings.Join(args, " "), err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start node %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		defer close(p.exited)
		p.scan(stdout)
		p.cmd.Wait()
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("output of node %s:\n%s", strings.Join(args, " "), p.output())
		}
	})
	return p
}

// scan copies stdout into the kept output and reports the LISTENING line. It
// returns when stdout closes.
func (p *proc) scan(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(&p.out, line)
		if port, ok := strings.CutPrefix(line, "LISTENING "); ok {
			select {
			case p.listening <- strings.TrimSpace(port):
			default:
			}
		}
	}
	io.Copy(io.Discard, stdout)
}

// waitDial blocks until addr accepts a TCP connection, failing the test if
// the process exits first or startTimeout passes.
func (p *proc) waitDial(t testing.TB, addr string) {
	t.Helper()
	deadline := time.After(startTimeout)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("node exited before accepting connections on %s; its output:\n%s", addr, p.output())
		case <-deadline:
			p.stop()
			t.Fatalf("node did not accept connections on %s within %s; its output:\n%s", addr, startTimeout, p.output())
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM to the process group, SIGKILL after stopGrace, and waits
// for the process to exit.
func (p *proc) stop() {
	p.stopOnce.Do(func() {
		pgid := -p.cmd.Process.Pid
		_ = syscall.Kill(pgid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(stopGrace):
			_ = syscall.Kill(pgid, syscall.SIGKILL)
			<-p.exited
		}
		// Children that outlived the leader go too.
		_ = syscall.Kill(pgid, syscall.SIGKILL)
	})
}

func (p *proc) output() string { return p.out.String() }

// lockedBuffer is a bytes.Buffer safe for concurrent writes and reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
