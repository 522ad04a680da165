package subscriber

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpwatch/watcher/config"
)

// Grace periods when stopping a stdio child: stdin is closed first, then
// SIGTERM, then SIGKILL, each sent to the child's whole process group (so
// `npx` or `go run` wrappers do not leave their real server behind).
var (
	childStdinGrace = 2 * time.Second
	childTermGrace  = 3 * time.Second
)

// child is a stdio MCP server process owned by one session. The session
// reads stdout and writes stdin; child owns the stderr reader and the
// waiter goroutine, and stop returns only after both exited.
type child struct {
	name   string
	cmd    *exec.Cmd
	stdin  *os.File // our write end
	stdout *os.File // our read end
	tail   *tailBuffer
	exited chan struct{}
	err    error // set before exited is closed
	wg     sync.WaitGroup
}

// startChild starts srv's command in its own process group, with srv.Env
// added to the inherited environment. Its stderr goes to logger one line at
// a time (key "server") and into a small tail buffer used in exit reports.
func startChild(srv config.Server, logger *slog.Logger) (*child, error) {
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for k, v := range srv.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Dir = srv.Cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	// Plain pipes rather than cmd.*Pipe: exec closes those in Wait, which
	// races with our reader; and cmd.Stderr as a Writer would make Wait block
	// until every grandchild holding the pipe has gone.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("start %q: %w (check servers.%s.command, args and cwd)", srv.Command, err, srv.Name)
	}
	closeAll(inR, outW, errW) // the child holds its ends now

	c := &child{name: srv.Name, cmd: cmd, stdin: inW, stdout: outR, tail: &tailBuffer{max: 2048}, exited: make(chan struct{})}
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		defer errR.Close()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 0, 4096), 64*1024)
		for sc.Scan() {
			line := sc.Text()
			c.tail.add(line)
			logger.Info("server stderr", "server", srv.Name, "line", line)
		}
	}()
	go func() {
		defer c.wg.Done()
		werr := cmd.Wait()
		if werr == nil {
			werr = errors.New("exited with status 0")
		}
		c.err = werr
		close(c.exited)
	}()
	return c, nil
}

// exitError describes the child's exit with the tail of its stderr; call it
// only after exited is closed.
func (c *child) exitError() error {
	if t := c.tail.String(); t != "" {
		return fmt.Errorf("process %d %v; stderr tail: %s", c.cmd.Process.Pid, c.err, t)
	}
	return fmt.Errorf("process %d %v", c.cmd.Process.Pid, c.err)
}

// stop closes stdin, then escalates to SIGTERM and SIGKILL on the process
// group, and returns after the child and our reader goroutines have exited.
func (c *child) stop() {
	c.stdin.Close()
	if !c.waitExit(childStdinGrace) {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
		if !c.waitExit(childTermGrace) {
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
			<-c.exited
		}
	}
	// Grandchildren may still hold stderr open after the leader exited.
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	c.stdout.Close()
	c.wg.Wait()
}

func (c *child) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}

func closeAll(fs ...io.Closer) {
	for _, f := range fs {
		f.Close()
	}
}

// tailBuffer keeps the last lines of a child's stderr, at most max bytes.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	lines []string
	size  int
}

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > t.max && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}
