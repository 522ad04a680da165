package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpwatch/watcher/event"
)

const waitFor = 30 * time.Second

// Binaries built once by TestMain.
var watcherBin, demoBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "watcher-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	watcherBin = filepath.Join(dir, "watcher")
	demoBin = filepath.Join(dir, "demoserver")
	for _, b := range [][]string{
		{"build", "-race", "-ldflags", "-X main.version=v9.9.9-test", "-o", watcherBin, "."},
		{"build", "-o", demoBin, "../../examples/demoserver"},
	} {
		cmd := exec.Command("go", b...)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go %s: %v\n%s", strings.Join(b, " "), err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// watcher runs the built binary with args to completion and returns its
// exit code, stdout and stderr.
func watcher(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cmd := exec.CommandContext(ctx, watcherBin, args...)
	cmd.Env = childEnv(t)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("run watcher %v: %v", args, err)
	}
	return code, o.String(), e.String()
}

// childEnv is the environment of a watcher child: ours, a fresh HOME, and
// no one-second pause of the race runtime at exit.
func childEnv(t *testing.T) []string {
	return append(os.Environ(), "HOME="+t.TempDir(), "GORACE=atexit_sleep_ms=0 halt_on_error=1")
}

func writeConfig(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

func TestVersion(t *testing.T) {
	code, out, _ := watcher(t, "version")
	require.Zero(t, code)
	require.Equal(t, "watcher v9.9.9-test\n", out)
}

func TestUsage(t *testing.T) {
	code, _, errOut := watcher(t)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "usage:")
	code, _, errOut = watcher(t, "frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown command "frobnicate"`)
}

func TestValidateGood(t *testing.T) {
	for name, body := range map[string]string{
		"watcher.yaml": `
servers:
  docs:
    url: http://127.0.0.1:3001/mcp
    subscriptions:
      - uri: file:///srv/docs/README.md
`,
		"watcher.json": `{"mcpServers": {"docs": {"type": "http", "url": "http://127.0.0.1:3001/mcp",
			"subscriptions": [{"uri": "file:///srv/docs/README.md"}]}}}`,
		"watcher.toml": `
[servers.docs]
command = "node"
args = ["server.js"]
[[servers.docs.subscriptions]]
uri = "file:///srv/docs/README.md"
`,
	} {
		t.Run(name, func(t *testing.T) {
			p := writeConfig(t, name, body)
			code, out, errOut := watcher(t, "validate", "-c", p)
			require.Zero(t, code, "stderr: %s", errOut)
			require.Equal(t, p+": ok (1 servers)\n", out)
			code, _, _ = watcher(t, "validate", "--config", p)
			require.Zero(t, code)
		})
	}
}

// TestValidateBad: every problem of the file on its own line, each naming
// its key path, and a non-zero exit.
func TestValidateBad(t *testing.T) {
	p := writeConfig(t, "watcher.yaml", `
nats:
  jetstream:
    duplicate_window: soon
bogus: 1
servers:
  docs:
    url: http://127.0.0.1:3001/mcp
    subscriptions:
      - method: auto
  "bad name":
    subscriptions:
      - uri: file:///x
`)
	code, out, errOut := watcher(t, "validate", "-c", p)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^servers\.docs\.subscriptions\[0\]\.uri: required`),
		regexp.MustCompile(`^nats\.jetstream\.duplicate_window: `),
		regexp.MustCompile(`^bogus: `),
		regexp.MustCompile(`^servers\.bad name`),
	}
	for _, re := range want {
		found := false
		for _, l := range lines {
			found = found || re.MatchString(l)
		}
		require.Truef(t, found, "no line matching %s in:\n%s", re, errOut)
	}
	require.Regexp(t, `problem\(s\)`, lines[len(lines)-1])
	for _, l := range lines[:len(lines)-1] {
		require.Regexp(t, `^[A-Za-z_][^:]*: \S`, l, "a problem line without a key path")
	}
}

func TestValidateMissingFile(t *testing.T) {
	code, _, errOut := watcher(t, "validate", "-c", filepath.Join(t.TempDir(), "nope.yaml"))
	require.NotZero(t, code)
	require.Contains(t, errOut, "nope.yaml")
}

// lines copies r into a buffer and reports each line on a channel, until r
// ends; then it closes the channel.
type lines struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	ch   chan string   // lines, dropped when nobody waits and it is full
	done chan struct{} // closed once r ended
}

func scanLines(r io.Reader) *lines {
	l := &lines{ch: make(chan string, 1024), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer close(l.ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			l.mu.Lock()
			l.buf.WriteString(sc.Text() + "\n")
			l.mu.Unlock()
			select {
			case l.ch <- sc.Text():
			default:
			}
		}
	}()
	return l
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// wait returns the first line (from now on) that matches re.
func (l *lines) wait(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case s, ok := <-l.ch:
			if !ok {
				t.Fatalf("the watcher's output ended before a line matching %s:\n%s", re, l)
			}
			if m := re.FindStringSubmatch(s); m != nil {
				return m
			}
		case <-deadline:
			t.Fatalf("no line matching %s within %s:\n%s", re, waitFor, l)
		}
	}
}

// TestRun runs the binary with an embedded NATS server on a free port and
// the demo server over stdio, reads the start event from the stream, and
// stops it with SIGTERM: exit 0, and the stdio child is gone.
func TestRun(t *testing.T) {
	files := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(files, "hello.md"), []byte("# hello\n"), 0o644))
	uri := "file://" + filepath.Join(files, "hello.md")
	p := writeConfig(t, "watcher.yaml", fmt.Sprintf(`
nats:
  url: ""
  embedded: {host: 127.0.0.1, port: -1, store_dir: %q}
log:
  events: true
servers:
  demo:
    command: %q
    args: [-dir, %q]
    subscriptions:
      - uri: %s
`, filepath.Join(t.TempDir(), "nats"), demoBin, files, uri))

	cmd := exec.Command(watcherBin, "run", "-c", p)
	cmd.Env = childEnv(t)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	out := scanLines(stderr)
	exited := make(chan error, 1)
	go func() {
		<-out.done // Wait closes the pipe: read it to the end first
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("watcher output:\n%s", out)
		}
	})
	natsURL := out.wait(t, regexp.MustCompile(`msg="watcher started".* nats=(nats://\S+)`))[1]
	out.wait(t, regexp.MustCompile(`msg="event published".*server=demo.*reason=start`))

	nc, err := nats.Connect(natsURL)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	s, err := js.Stream(ctx, "MCP_EVENTS")
	require.NoError(t, err)
	raw, err := s.GetLastMsgForSubject(ctx, "mcp.events.demo.start")
	require.NoError(t, err)
	var ev event.MCPResourceEvent
	require.NoError(t, json.Unmarshal(raw.Data, &ev))
	require.Equal(t, uri, ev.URI)
	require.Equal(t, "# hello\n", ev.Resource.Contents[0].Text)
	require.Equal(t, ev.ID, raw.Header.Get(event.HeaderMsgID))
	nc.Close()

	child := childOf(t, cmd.Process.Pid)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "exit status after SIGTERM")
		exited <- nil // for the cleanup
	case <-time.After(waitFor):
		t.Fatal("the watcher did not exit after SIGTERM")
	}
	require.Contains(t, out.String(), "watcher stopped")
	require.True(t, errors.Is(syscall.Kill(child, 0), syscall.ESRCH), "the demo server (pid %d) outlived the watcher", child)
}

// childOf returns the pid of the one child of pid.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil || len(strings.Fields(string(b))) == 0 {
		// Children may be listed under another thread of the process.
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		b = nil
		for _, task := range tasks {
			c, _ := os.ReadFile(task)
			b = append(b, c...)
			b = append(b, ' ')
		}
	}
	f := strings.Fields(string(b))
	require.Len(t, f, 1, "children of the watcher: %q", f)
	var child int
	_, err = fmt.Sscan(f[0], &child)
	require.NoError(t, err)
	return child
}
