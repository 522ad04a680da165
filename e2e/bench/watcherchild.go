package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/internal/app"
)

// watcherParams configure the watcher child.
type watcherParams struct {
	Config string `json:"config"` // path of the config file
}

// runWatcherChild runs the watcher daemon (internal/app, as cmd/watcher
// does) with the config file, answering commands until stdin closes:
//
//	stats                  procStats as JSON
//	gc-stats               procStats after a forced garbage collection
//	cpuprofile <path>      start a CPU profile
//	cpuprofile-stop        stop it
//	heapprofile <path>     write a heap profile (allocations since start)
//	goroutines <path>      write every goroutine's stack, grouped (debug=1)
func runWatcherChild(params string, in io.Reader, out io.Writer) error {
	var p watcherParams
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	cfg, err := config.Load(p.Config, nil)
	if err != nil {
		return fmt.Errorf("load %s: %w", p.Config, err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := app.New(app.Options{Config: cfg, Logger: log, Version: "bench"})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	var prof *os.File
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		var err error
		switch cmd {
		case "stats":
			err = answer(out, selfStats())
		case "gc-stats":
			runtime.GC()
			err = answer(out, selfStats())
		case "cpuprofile":
			if prof, err = os.Create(arg); err == nil {
				err = pprof.StartCPUProfile(prof)
			}
			err = reply(out, err)
		case "cpuprofile-stop":
			pprof.StopCPUProfile()
			if prof != nil {
				err = prof.Close()
				prof = nil
			}
			err = reply(out, err)
		case "heapprofile":
			err = reply(out, writeHeapProfile(arg))
		case "goroutines":
			err = reply(out, writeGoroutines(arg))
		default:
			err = answerErr(out, fmt.Errorf("unknown command %q", cmd))
		}
		if err != nil {
			return err
		}
	}
	cancel()
	return <-done
}

// reply answers ok, or the error.
func reply(out io.Writer, err error) error {
	if err != nil {
		return answerErr(out, err)
	}
	return answer(out, map[string]bool{"ok": true})
}

// writeHeapProfile collects garbage first, so inuse_space is what is live.
func writeHeapProfile(path string) error {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeGoroutines(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("goroutine").WriteTo(f, 1); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
