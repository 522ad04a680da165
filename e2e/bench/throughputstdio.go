package bench

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpwatch/watcher/config"
)

// throughputStdio is throughput with the MCP server a stdio child of the
// watcher: the bench server (this executable in mode stdio-server), its
// closed loop switched over a control socket. The baselines run the same
// server binary as stdio children of bare mcp-go clients.
func throughputStdio(e *env) ([]Row, error) {
	window := size(e, 2*time.Second, 150*time.Millisecond)
	rounds := size(e, 3, 1)
	var rows []Row
	for _, nu := range []int{1, 100} {
		r, err := throughputStdioOnce(e, nu, window, rounds)
		rows = append(rows, r...)
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// throughputStdioOnce measures 1 stdio server × nu URIs.
func throughputStdioOnce(e *env, nu int, window time.Duration, rounds int) (_ []Row, err error) {
	name := fmt.Sprintf("1×%d", nu)
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	conc := min(maxConcurrentReads, nu)
	uris := newResources("s000", nu).URIs()
	base := stdioParams{Name: "s000", N: nu}
	bareP := bareParams{Command: exe, Env: [][]string{stdioServerEnv(base)}, URIs: [][]string{uris},
		Concurrency: conc, Seconds: window.Seconds()}

	ctl, err := listenControl()
	if err != nil {
		return nil, err
	}
	defer ctl.close()
	watched := base
	watched.Control = ctl.path()
	env := map[string]string{}
	for _, kv := range stdioServerEnv(watched) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	entries := map[string]any{"s000": map[string]any{"transport": config.TransportStdio, "command": exe,
		"env": env, "subscriptions": subscriptions(uris)}}

	bare, err := startBare(bareP)
	if err != nil {
		return nil, fmt.Errorf("baseline stdio %s: %w", name, err)
	}
	defer func() {
		if cerr := bare.Close(); err == nil {
			err = cerr
		}
	}()
	s, err := e.startSetupFor("throughput-stdio-"+name, nil, entries, nu, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := s.close(); err == nil {
			err = cerr
		}
	}()
	if err := ctl.accept(1, 30*time.Second); err != nil {
		return nil, err
	}
	era := "2025-11-25 (resources/subscribe)"
	if l, err := ctl.listening(); err != nil {
		return nil, err
	} else if l > 0 {
		era = "2026-07-28 (subscriptions/listen)"
	}
	e.logf("throughput stdio %s: the watcher negotiated %s", name, era)
	pubP := bareP
	pubP.NATS = s.nats.URL()
	barePub, err := startBare(pubP)
	if err != nil {
		return nil, fmt.Errorf("baseline stdio with publish %s: %w", name, err)
	}
	defer func() {
		if cerr := barePub.Close(); err == nil {
			err = cerr
		}
	}()
	b, p, w, err := alternate(e, "throughput-stdio-"+name, rounds, window, bare, barePub, s, ctl)
	if err != nil {
		return nil, err
	}
	return throughputRows("1 throughput stdio "+name, fmt.Sprintf("1×%d", conc), "stdio ", b, p, w), nil
}
