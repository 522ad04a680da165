package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/mcpwatch/watcher/event"
)

// bareParams configure the baseline child: bare mcp-go clients (one per
// URL, as the watcher has one session per server) read in a loop with
// Concurrency goroutines each, and optionally publish every read to
// JetStream. No coalescing, no handlers, no buffer: the raw cost.
type bareParams struct {
	URLs []string `json:"urls"`
	// Command, when set, replaces URLs: one stdio client per Env entry,
	// each running Command with that environment added.
	Command     string     `json:"command,omitempty"`
	Env         [][]string `json:"env,omitempty"`
	URIs        [][]string `json:"uris"` // per URL (or Env entry)
	Concurrency int        `json:"concurrency"`
	Seconds     float64    `json:"seconds"`
	Rate        float64    `json:"rate"` // total reads/s; 0: as fast as possible
	NATS        string     `json:"nats"` // publish each read when set
	SyncPublish bool       `json:"sync_publish"`
}

// bareResult is what the baseline child measured.
type bareResult struct {
	Ops     int64     `json:"ops"`
	Errors  int64     `json:"errors"`
	Seconds float64   `json:"seconds"`
	CPU     int64     `json:"cpu_ns"`
	Read    quantiles `json:"read"`
	Publish quantiles `json:"publish"`
}

// quantiles of a duration sample, in nanoseconds.
type quantiles struct {
	N    int   `json:"n"`
	P50  int64 `json:"p50"`
	P99  int64 `json:"p99"`
	P999 int64 `json:"p999"`
}

func quantilesOf(d []time.Duration) quantiles {
	if len(d) == 0 {
		return quantiles{}
	}
	slices.Sort(d)
	at := func(q float64) int64 { return int64(d[min(len(d)-1, int(q*float64(len(d))))]) }
	return quantiles{N: len(d), P50: at(0.50), P99: at(0.99), P999: at(0.999)}
}

// runBareChild connects, answers {"ready":true}, then runs the loop for
// each "run" command and answers a bareResult, until stdin closes.
func runBareChild(params string, in io.Reader, out io.Writer) error {
	var p bareParams
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dial := func(i int) (*client.Client, string, error) {
		c, err := client.NewStreamableHttpClient(p.URLs[i])
		return c, p.URLs[i], err
	}
	n := len(p.URLs)
	if p.Command != "" {
		n = len(p.Env)
		dial = func(i int) (*client.Client, string, error) {
			return client.NewClient(transport.NewStdio(p.Command, p.Env[i])), fmt.Sprintf("stdio server %d", i), nil
		}
	}
	clients := make([]*client.Client, n)
	for i := range n {
		c, u, err := dial(i)
		if err != nil {
			return err
		}
		defer c.Close()
		if err := c.Start(ctx); err != nil {
			return err
		}
		ictx, icancel := context.WithTimeout(ctx, 30*time.Second)
		_, err = c.Initialize(ictx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: "bare", Version: "1"}}})
		icancel()
		if err != nil {
			return fmt.Errorf("initialize %s: %w", u, err)
		}
		clients[i] = c
	}
	var js jetstream.JetStream
	if p.NATS != "" {
		nc, err := nats.Connect(p.NATS)
		if err != nil {
			return err
		}
		defer nc.Close()
		if js, err = jetstream.New(nc); err != nil {
			return err
		}
	}
	if err := answer(out, map[string]bool{"ready": true}); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if sc.Text() != "run" {
			if err := answerErr(out, fmt.Errorf("unknown command %q", sc.Text())); err != nil {
				return err
			}
			continue
		}
		if err := answer(out, runBare(ctx, p, clients, js)); err != nil {
			return err
		}
	}
	return nil
}

func runBare(ctx context.Context, p bareParams, clients []*client.Client, js jetstream.JetStream) bareResult {
	var tokens chan struct{}
	runCtx, stop := context.WithTimeout(ctx, time.Duration(p.Seconds*float64(time.Second)))
	defer stop()
	var wg sync.WaitGroup
	if p.Rate > 0 {
		tokens = make(chan struct{}, 1024)
		wg.Add(1)
		go func() {
			defer wg.Done()
			pace(runCtx, p.Rate, func() bool {
				select {
				case tokens <- struct{}{}:
					return true
				case <-runCtx.Done():
					return false
				}
			})
		}()
	}
	var ops, errs, seq atomic.Int64
	var mu sync.Mutex
	var reads, pubs []time.Duration
	before := selfStats().CPU
	t0 := time.Now()
	for i, c := range clients {
		uris := p.URIs[i]
		var next atomic.Int64
		for range p.Concurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var myReads, myPubs []time.Duration
				defer func() {
					mu.Lock()
					reads, pubs = append(reads, myReads...), append(pubs, myPubs...)
					mu.Unlock()
				}()
				for runCtx.Err() == nil {
					if tokens != nil {
						select {
						case <-tokens:
						case <-runCtx.Done():
							return
						}
					}
					uri := uris[int(next.Add(1)-1)%len(uris)]
					r0 := time.Now()
					res, err := c.ReadResource(runCtx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
					if err != nil {
						if runCtx.Err() == nil {
							errs.Add(1)
						}
						continue
					}
					myReads = append(myReads, time.Since(r0))
					if js != nil {
						p0 := time.Now()
						if err := barePublish(runCtx, js, p.SyncPublish, res, uri, seq.Add(1)); err != nil {
							errs.Add(1)
							continue
						}
						myPubs = append(myPubs, time.Since(p0))
					}
					ops.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(t0)
	if js != nil && !p.SyncPublish {
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(10 * time.Second):
		}
	}
	return bareResult{Ops: ops.Load(), Errors: errs.Load(), Seconds: elapsed.Seconds(), CPU: selfStats().CPU - before,
		Read: quantilesOf(reads), Publish: quantilesOf(pubs)}
}

// barePublish encodes the read as an event and publishes it, waiting for
// the ack when sync.
func barePublish(ctx context.Context, js jetstream.JetStream, sync bool, res *mcp.ReadResourceResult, uri string, seq int64) error {
	ev := event.MCPResourceEvent{ID: "bare-" + strconv.FormatInt(seq, 10), ClientName: "bare", URI: uri, Reason: event.ReasonUpdate, Time: time.Now().UTC(), Seq: uint64(seq)}
	ev.Resource = &event.Resource{}
	for _, c := range res.Contents {
		if t, ok := c.(mcp.TextResourceContents); ok {
			ev.Resource.Contents = append(ev.Resource.Contents, event.Content{URI: t.URI, MIMEType: t.MIMEType, Text: t.Text})
		}
	}
	data, err := json.Marshal(&ev)
	if err != nil {
		return err
	}
	msg := &nats.Msg{Subject: "mcp.events.bare.update", Data: data, Header: nats.Header{}}
	msg.Header.Set(event.HeaderMsgID, ev.ID)
	if sync {
		_, err = js.PublishMsg(ctx, msg)
		return err
	}
	_, err = js.PublishMsgAsync(msg)
	return err
}

// pace calls emit rate times a second until ctx ends or emit returns false.
// It ticks every millisecond and emits what is due, so rates above 1,000/s
// come in small bursts.
func pace(ctx context.Context, rate float64, emit func() bool) {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	t0 := time.Now()
	var sent int64
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			due := int64(now.Sub(t0).Seconds() * rate)
			for ; sent < due; sent++ {
				if !emit() {
					return
				}
			}
		}
	}
}
