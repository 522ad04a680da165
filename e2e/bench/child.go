package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The child protocol: the parent starts its own executable with
// WATCHER_BENCH_CHILD=<mode>, writes the mode's parameters as one JSON line
// on the child's stdin, then one command per line, and reads one JSON line
// per command from the child's stdout. Closing stdin tells the child to shut down and
// exit. The child's stderr is kept for error messages.
const envChild = "WATCHER_BENCH_CHILD"

// MaybeChild runs the child's part and exits when this process was started
// as a benchmark child; otherwise it returns at once. Call it first thing in
// main or TestMain.
func MaybeChild() {
	mode := os.Getenv(envChild)
	if mode == "" {
		return
	}
	if mode == modeStdioServer { // stdin is the MCP stream: no parameter line
		if err := runStdioServerChild(); err != nil {
			fmt.Fprintln(os.Stderr, "bench stdio server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	params, err := in.ReadString('\n')
	switch {
	case err != nil:
		err = fmt.Errorf("read parameters: %w", err)
	case mode == "watcher":
		err = runWatcherChild(params, in, os.Stdout)
	case mode == "bare":
		err = runBareChild(params, in, os.Stdout)
	default:
		err = fmt.Errorf("unknown %s mode %q", envChild, mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// procStats are a process's own figures.
type procStats struct {
	Goroutines int   `json:"goroutines"`
	RSS        int64 `json:"rss"`    // bytes, VmRSS
	CPU        int64 `json:"cpu_ns"` // user+sys, getrusage(RUSAGE_SELF)
	HeapInuse  int64 `json:"heap"`   // runtime.MemStats.HeapInuse
	Sys        int64 `json:"sys"`    // runtime.MemStats.Sys
	Stacks     int64 `json:"stacks"` // runtime.MemStats.StackInuse
}

// selfStats measures this process.
func selfStats() procStats {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return procStats{
		Goroutines: runtime.NumGoroutine(),
		RSS:        vmRSS(),
		CPU:        ru.Utime.Nano() + ru.Stime.Nano(),
		HeapInuse:  int64(ms.HeapInuse),
		Sys:        int64(ms.Sys),
		Stacks:     int64(ms.StackInuse),
	}
}

// vmRSS reads VmRSS from /proc/self/status (0 where there is none).
func vmRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// childProc is the parent's handle on a child. Calls are serialised.
type childProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
	mu     sync.Mutex
	closed bool
}

// startChild starts this executable as a child in mode with params and
// extra environment entries. The caller must call Close.
func startChild(mode string, params any, extraEnv ...string) (*childProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("bench child: find own executable: %w", err)
	}
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	// A race-enabled child would sleep 1 s at exit (GORACE atexit_sleep_ms).
	cmd.Env = append(os.Environ(), envChild+"="+mode,
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.Env = append(cmd.Env, extraEnv...)
	c := &childProc{cmd: cmd, stderr: &tailBuffer{max: 8 << 10}}
	cmd.Stderr = c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.out = bufio.NewReaderSize(stdout, 1<<16)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench child %s: %w", mode, err)
	}
	if _, err := c.stdin.Write(append(p, '\n')); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("bench child %s: send parameters: %w%s", mode, err, c.stderr.suffix())
	}
	return c, nil
}

// call sends cmd and decodes the child's one-line answer into reply (which
// may be nil). It blocks until the answer arrives or the child exits.
func (c *childProc) call(cmd string, reply any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cmd != "" {
		if _, err := io.WriteString(c.stdin, cmd+"\n"); err != nil {
			return fmt.Errorf("bench child: send %q: %w%s", cmd, err, c.stderr.suffix())
		}
	}
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("bench child: answer to %q: %w%s", cmd, err, c.stderr.suffix())
	}
	var env struct {
		Err string `json:"error"`
	}
	if json.Unmarshal(line, &env) == nil && env.Err != "" {
		return fmt.Errorf("bench child: %q: %s", cmd, env.Err)
	}
	if reply == nil {
		return nil
	}
	return json.Unmarshal(line, reply)
}

// stats asks the child for its procStats with cmd ("stats" or "gc-stats").
func (c *childProc) stats(cmd string) (procStats, error) {
	var s procStats
	err := c.call(cmd, &s)
	return s, err
}

// Close closes the child's stdin and waits for it to exit (killing it
// after 30 s). Safe to call more than once.
func (c *childProc) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	_ = c.stdin.Close()
	c.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("bench child: %w%s", err, c.stderr.suffix())
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
		return errors.New("bench child did not exit within 30s of stdin closing; killed" + c.stderr.suffix())
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.Write(p)
	if over := t.b.Len() - t.max; over > 0 {
		t.b.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) suffix() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.b.Len() == 0 {
		return ""
	}
	return "; child stderr: " + strings.TrimSpace(t.b.String())
}

// answer writes v as one JSON line (the child's side of call).
func answer(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// answerErr writes an error line.
func answerErr(w io.Writer, err error) error {
	return answer(w, map[string]string{"error": err.Error()})
}
