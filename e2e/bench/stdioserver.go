package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// A stdio bench server is this executable re-executed with
// WATCHER_BENCH_CHILD=stdio-server by whoever runs it over stdio (the
// watcher child, from its config; the baseline child, through mcp-go's
// stdio transport). Its stdin and stdout are the MCP stream, so its
// parameters come in the environment (envStdio, JSON stdioParams).
//
// The closed loop is switched from the parent over a Unix socket
// (stdioControl): the server dials it at start and then answers one line
// per command, "<reads> <open listens>":
//
//	on      renotify on, and one notification for every URI (the kick)
//	off     renotify off
//	stats   nothing else
const (
	modeStdioServer = "stdio-server"
	envStdio        = "WATCHER_BENCH_STDIO"
)

// stdioParams configure a stdio bench server.
type stdioParams struct {
	Name string `json:"name"`
	N    int    `json:"n"` // resources bench://<name>/r<i>
	// Control is the parent's control socket; empty leaves renotify off
	// for good (the baseline's servers).
	Control string `json:"control,omitempty"`
}

// stdioServerEnv is the environment (KEY=value) that makes this executable
// a stdio bench server with p.
func stdioServerEnv(p stdioParams) []string {
	b, _ := json.Marshal(p) // plain struct: cannot fail
	return []string{envChild + "=" + modeStdioServer, envStdio + "=" + string(b)}
}

// runStdioServerChild serves a bench server over stdin/stdout until stdin
// closes, then waits for its control reader to end.
func runStdioServerChild() error {
	var p stdioParams
	if err := json.Unmarshal([]byte(os.Getenv(envStdio)), &p); err != nil {
		return fmt.Errorf("%s: %w", envStdio, err)
	}
	s := newResources(p.Name, p.N)
	s.stdio = true
	s.listen = map[server.ClientSession]any{}
	s.stop = make(chan struct{})
	s.mcp = s.newMCPServer()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	if p.Control != "" {
		conn, err := net.Dial("unix", p.Control)
		if err != nil {
			return fmt.Errorf("control socket: %w", err)
		}
		defer func() {
			_ = conn.Close() // ends serveControl's read
			wg.Wait()
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveControl(ctx, conn)
		}()
	}
	err := server.NewStdioServer(s.mcp).Listen(ctx, os.Stdin, os.Stdout)
	close(s.stop) // unblocks notification sends
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// serveControl answers the parent's commands until conn closes.
func (s *benchServer) serveControl(ctx context.Context, conn net.Conn) {
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		switch sc.Text() {
		case "on":
			s.renotify.Store(true)
			for _, r := range s.res {
				r.ver.Add(1)
				s.notify(ctx, r.uri)
			}
		case "off":
			s.renotify.Store(false)
		}
		if _, err := fmt.Fprintf(conn, "%d %d\n", s.reads(), s.Listening()); err != nil {
			return
		}
	}
}

// stdioControl is the parent's end of the stdio servers' control sockets.
// Calls are not safe for concurrent use; the caller must call close.
type stdioControl struct {
	dir   string
	ln    *net.UnixListener
	conns []*bufio.ReadWriter
	raw   []net.Conn
}

// listenControl listens on a Unix socket in a fresh short directory (socket
// paths are limited to about 100 bytes).
func listenControl() (*stdioControl, error) {
	dir, err := os.MkdirTemp("", "wbctl-")
	if err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: dir + "/ctl", Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return &stdioControl{dir: dir, ln: ln}, nil
}

// path is the socket's path, for stdioParams.Control.
func (c *stdioControl) path() string { return c.dir + "/ctl" }

// accept waits until n servers have connected, at most timeout.
func (c *stdioControl) accept(n int, timeout time.Duration) error {
	if err := c.ln.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	for len(c.raw) < n {
		conn, err := c.ln.Accept()
		if err != nil {
			return fmt.Errorf("stdio bench servers connected: %d of %d: %w", len(c.raw), n, err)
		}
		c.raw = append(c.raw, conn)
		c.conns = append(c.conns, bufio.NewReadWriter(bufio.NewReader(conn), bufio.NewWriter(conn)))
	}
	return nil
}

// send sends cmd to every server and sums their answers.
func (c *stdioControl) send(cmd string) (reads int64, listens int, err error) {
	for i, rw := range c.conns {
		_ = c.raw[i].SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := rw.WriteString(cmd + "\n"); err != nil {
			return 0, 0, err
		}
		if err := rw.Flush(); err != nil {
			return 0, 0, fmt.Errorf("stdio bench server: %q: %w", cmd, err)
		}
		line, err := rw.ReadString('\n')
		if err != nil {
			return 0, 0, fmt.Errorf("stdio bench server: answer to %q: %w", cmd, err)
		}
		r, l, _ := strings.Cut(strings.TrimSpace(line), " ")
		nr, err1 := strconv.ParseInt(r, 10, 64)
		nl, err2 := strconv.Atoi(l)
		if err := errors.Join(err1, err2); err != nil {
			return 0, 0, fmt.Errorf("stdio bench server: answer %q: %w", line, err)
		}
		reads += nr
		listens += nl
	}
	return reads, listens, nil
}

// loopOn, loopOff and loopReads make the stdio servers a loopServers.
func (c *stdioControl) loopOn() error           { _, _, err := c.send("on"); return err }
func (c *stdioControl) loopOff() error          { _, _, err := c.send("off"); return err }
func (c *stdioControl) loopReads() int64        { r, _, _ := c.send("stats"); return r }
func (c *stdioControl) listening() (int, error) { _, l, err := c.send("stats"); return l, err }

// close closes the connections and the listener and removes the socket.
func (c *stdioControl) close() {
	for _, conn := range c.raw {
		_ = conn.Close()
	}
	_ = c.ln.Close()
	os.RemoveAll(c.dir)
}
