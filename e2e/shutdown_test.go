package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpwatch/watcher/event"
	"github.com/mcpwatch/watcher/handlers"
	"github.com/mcpwatch/watcher/internal/app"
	"github.com/mcpwatch/watcher/internal/mcptest"
)

// childPIDs returns the pids of this process's children whose command line
// contains marker.
func childPIDs(t *testing.T, marker string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so split after ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(self) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cmdline, []byte(marker)) {
			out = append(out, pid)
		}
	}
	return out
}

// gone reports whether pid no longer exists (a zombie counts as present).
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestGracefulShutdown: cancelling Run returns nil promptly, after the
// stdio child has exited and been reaped, and an event handed to the
// publisher just before the cancel is still delivered.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	natsURL := startNATS(t)
	dir := demoFiles(t, map[string]string{"a.txt": "a1"})
	a := fileURI(dir, "a.txt")
	ms := mcptest.Start(t, mcptest.Options{})
	ms.Set("test://h", "h1")
	cfg := baseConfig(natsURL)
	withServer(cfg, "stdio", demoServerEntry(t, dir, a))
	withServer(cfg, "http", M{"url": ms.URL, "subscriptions": subs("test://h")})
	// handed is closed when the event with "a3" enters the publisher: the
	// test cancels at that moment, so the event is in flight.
	handed := make(chan struct{})
	var once sync.Once
	mark := func(next handlers.Handler) handlers.Handler {
		return func(ctx context.Context, ev *event.MCPResourceEvent) error {
			if ev.Resource != nil && len(ev.Resource.Contents) == 1 && ev.Resource.Contents[0].Text == "a3" {
				once.Do(func() { close(handed) })
			}
			return next(ctx, ev)
		}
	}
	r := runApp(t, loadConfig(t, cfg), app.Options{Middleware: []handlers.Middleware{mark}})
	c := consume(t, natsURL)

	c.next(is(a, event.ReasonStart, "a1"))
	c.next(is("test://h", event.ReasonStart, "h1"))
	r.waitReady(t)
	pids := childPIDs(t, dir)
	require.Len(t, pids, 1, "one demo server child for %s", dir)

	writeFile(t, dir, "a.txt", "a2")
	c.next(is(a, event.ReasonUpdate, "a2"))

	writeFile(t, dir, "a.txt", "a3")
	select {
	case <-handed:
	case <-time.After(waitFor):
		t.Fatal("the update to a3 was not handled")
	}
	t0 := time.Now()
	require.NoError(t, r.stop(t))
	took := time.Since(t0)
	// The demo server exits as soon as its stdin closes, well within the
	// 2 s stdin grace; a SIGKILL path would take more than 5 s.
	require.Less(t, took, 5*time.Second, "shutdown took %s", took)
	require.True(t, gone(pids[0]), "the stdio child %d is still there after Run returned", pids[0])
	r.Logs.waitLine(t, "publisher stopped")
	c.next(is(a, event.ReasonUpdate, "a3")) // flushed on the way out
	t.Logf("shutdown took %s", took)
}
