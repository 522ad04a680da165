package subscriber

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpwatch/watcher/config"
	"github.com/mcpwatch/watcher/event"
)

// This file is the only one that knows mcp-go's API.

// DialOptions configures NewDialer.
type DialOptions struct {
	Server config.Server
	Logger *slog.Logger
	// Legacy forces the initialize handshake (no server/discover probe):
	// set when every subscription of the server uses resources/subscribe.
	Legacy bool
	// Version is sent as clientInfo.version.
	Version string
	// DiscoverTimeout bounds the server/discover probe against servers that
	// ignore unknown methods (default 5s).
	DiscoverTimeout time.Duration
}

// NewDialer returns a Dialer for opts.Server over its configured transport.
// It remembers per server whether the peer turned out to be legacy, so a
// Streamable HTTP reconnect does not repeat the era probe.
func NewDialer(opts DialOptions) Dialer {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	var legacyKnown atomic.Bool
	legacyKnown.Store(opts.Legacy)
	return func(ctx context.Context, notify func(string)) (Session, error) {
		s, err := dial(ctx, opts, legacyKnown.Load(), notify)
		if errors.Is(err, errRetryLegacy) {
			legacyKnown.Store(true)
			s, err = dial(ctx, opts, true, notify)
		}
		if err != nil && opts.Legacy && ctx.Err() == nil {
			// Every subscription forces resources/subscribe, and the legacy
			// handshake failed: a 2026-07-28-only server refuses it. Connect
			// in its era instead, so each subscription reports that its
			// method does not exist there rather than the server looking
			// unreachable.
			if ms, merr := dial(ctx, opts, false, notify); merr == nil {
				if ms.Modern() {
					opts.Logger.Warn("the legacy handshake failed but the server speaks "+ms.Protocol()+"; connected in that era", "server", opts.Server.Name, "err", err)
					return ms, nil
				}
				ms.Close()
			}
		}
		return s, err
	}
}

// errRetryLegacy: the probe settled on a setup that cannot work (the
// discover bug, or a legacy HTTP server reached without a GET stream); dial
// again forcing the legacy handshake.
var errRetryLegacy = errors.New("retry with the legacy handshake")

type mcpSession struct {
	c        *client.Client
	logger   *slog.Logger
	server   string
	child    *child
	ctx      context.Context    // the Start context: lives until Close
	cancel   context.CancelFunc // ends ctx
	wg       sync.WaitGroup     // listen and child-watch goroutines
	notify   func(string)
	modern   bool
	canSub   bool
	protocol string

	done     chan struct{}
	loseOnce sync.Once
	err      error // set before done is closed

	acks chan []string
	// listMu guards the current listen: its generation (a later Listen
	// supersedes an earlier one) and the subscription id its acknowledgement
	// carried, as a canonical string (see idKey).
	listMu  sync.Mutex
	listGen uint64
	listID  string

	closeOnce sync.Once
}

func dial(ctx context.Context, opts DialOptions, legacy bool, notify func(string)) (_ Session, err error) {
	srv := opts.Server
	s := &mcpSession{
		logger: opts.Logger,
		server: srv.Name,
		notify: notify,
		done:   make(chan struct{}),
		acks:   make(chan []string, 1),
	}
	// The Start context lives as long as the session: stdio and the GET
	// listener are bound to it.
	startCtx, cancel := context.WithCancel(context.Background())
	s.ctx, s.cancel = startCtx, cancel
	defer func() {
		if err != nil {
			s.Close()
		}
	}()

	maxBody := 4*srv.MaxContentBytes + 1<<20
	watch := &lossWatcher{
		base: http.DefaultTransport.(*http.Transport).Clone(), onLoss: s.lose, maxBody: maxBody, getUp: make(chan struct{}),
	}
	httpClient := &http.Client{Transport: watch} // no Timeout: it would kill the streams; requests carry contexts.

	sdkLog := sdkLogger(opts.Logger, srv.Name)
	var tr transport.Interface
	switch srv.Transport {
	case config.TransportStdio:
		ch, err := startChild(srv, opts.Logger)
		if err != nil {
			return nil, err
		}
		s.child = ch
		tr = transport.NewIO(ch.stdout, ch.stdin, nil)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			select {
			case <-ch.exited:
				s.lose(ch.exitError())
			case <-startCtx.Done():
			}
		}()
	case config.TransportSSE:
		t, err := transport.NewSSE(srv.URL, transport.WithHeaders(srv.Headers), transport.WithHTTPClient(httpClient), transport.WithSSELogger(sdkLog))
		if err != nil {
			return nil, fmt.Errorf("servers.%s.url: %w", srv.Name, err)
		}
		t.SetConnectionLostHandler(func(err error) { s.lose(fmt.Errorf("SSE stream lost: %w", err)) })
		tr = t
	default:
		topts := []transport.StreamableHTTPCOption{
			transport.WithHTTPHeaders(srv.Headers), transport.WithHTTPBasicClient(httpClient), transport.WithHTTPLogger(sdkLog),
		}
		if legacy {
			// The GET stream carries legacy notifications; it implies legacy.
			topts = append(topts, transport.WithContinuousListening())
		}
		t, err := transport.NewStreamableHTTP(srv.URL, topts...)
		if err != nil {
			return nil, fmt.Errorf("servers.%s.url: %w", srv.Name, err)
		}
		tr = t
	}

	copts := []client.ClientOption{}
	if legacy {
		copts = append(copts, client.WithLegacyProtocolOnly())
	}
	if opts.DiscoverTimeout > 0 {
		copts = append(copts, client.WithDiscoverTimeout(opts.DiscoverTimeout))
	}
	s.c = client.NewClient(tr, copts...)
	s.c.OnNotification(s.onNotification) // before Start, per mcp-go
	if err := s.c.Start(startCtx); err != nil {
		return nil, fmt.Errorf("start transport: %w", err)
	}

	initCtx, cancelInit := context.WithTimeout(ctx, srv.Timeout())
	defer cancelInit()
	res, err := s.c.Initialize(initCtx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "mcp-watcher", Version: opts.Version},
	}})
	if err != nil {
		if errors.Is(err, transport.ErrLegacySSEServer) {
			return nil, fmt.Errorf("initialize: %w (set servers.%s.transport: sse)", err, srv.Name)
		}
		return nil, fmt.Errorf("initialize: %w", err)
	}
	s.protocol = s.c.ProtocolVersion()
	s.modern = mcp.IsModernProtocol(s.protocol)
	caps := res.Capabilities.Resources
	s.canSub = caps != nil && caps.Subscribe

	if s.modern {
		// mcp-go takes any successful server/discover as modern, even when
		// supportedVersions lacks the version it sent (mcp-protocol.md §3).
		d, err := s.c.Discover(initCtx, mcp.DiscoverRequest{})
		if err != nil || !slices.Contains(d.SupportedVersions, s.protocol) {
			s.logger.Info("server answered server/discover without supporting "+s.protocol+"; using the legacy handshake", "server", srv.Name)
			return nil, errRetryLegacy
		}
	} else if srv.Transport == config.TransportStreamableHTTP && !legacy {
		// A legacy HTTP server sends notifications on the GET stream, which
		// mcp-go opens only when legacy is forced from the start.
		return nil, errRetryLegacy
	} else if srv.Transport == config.TransportStreamableHTTP {
		// mcp-go opens the GET stream in the background; an update sent
		// before it is up is lost on servers that keep no queue. Subscribe
		// (and read) only once it is.
		select {
		case <-watch.getUp:
			if watch.noGET.Load() {
				s.logger.Warn("the server offers no server-to-client stream (GET answered 405): updates cannot arrive, only start and reconnect reads", "server", srv.Name)
			}
		case <-s.done:
			return nil, fmt.Errorf("server-to-client stream: %w", s.err)
		case <-initCtx.Done():
			return nil, fmt.Errorf("server-to-client stream did not open within %s", srv.Timeout())
		}
	}
	return s, nil
}

func (s *mcpSession) onNotification(n mcp.JSONRPCNotification) {
	switch n.Method {
	case string(mcp.MethodNotificationResourceUpdated):
		if id, ok := n.Params.Meta[subscriptionIDKey]; ok {
			s.listMu.Lock()
			want := s.listID
			s.listMu.Unlock()
			if want != "" && idKey(id) != want {
				return // a stale stream's notification
			}
		}
		if uri, ok := n.Params.AdditionalFields["uri"].(string); ok {
			s.notify(uri)
		}
	case methodAcknowledged:
		if id, ok := n.Params.Meta[subscriptionIDKey]; ok {
			s.listMu.Lock()
			s.listID = idKey(id)
			s.listMu.Unlock()
		}
		acked := []string{}
		if f, ok := n.Params.AdditionalFields["notifications"].(map[string]any); ok {
			if list, ok := f["resourceSubscriptions"].([]any); ok {
				for _, u := range list {
					if u, ok := u.(string); ok {
						acked = append(acked, u)
					}
				}
			}
		}
		select {
		case s.acks <- acked:
		default:
		}
	case string(mcp.MethodNotificationCancelled):
		// The server ended our listen (2026-07-28 cancellation). mcp-go does
		// not end Listen for it (on stdio it would block for ever), so the
		// stream is treated as gone.
		id, ok := n.Params.AdditionalFields["requestId"]
		s.listMu.Lock()
		current := s.listID
		s.listMu.Unlock()
		if ok && current != "" && idKey(id) == current {
			reason, _ := n.Params.AdditionalFields["reason"].(string)
			s.lose(fmt.Errorf("the server cancelled the subscriptions/listen stream (%s)", reason))
		}
	}
}

// idKey renders a JSON-RPC id or subscription id canonically, so that the
// same id compares equal however the JSON decoder typed it (float64,
// json.Number, a Go integer, or a string holding the number).
func idKey(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return "s:" + v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case json.Number:
		return idKey(string(v))
	default:
		// Integers, mcp.RequestId and other JSON-encodable ids: by their JSON.
		b, err := json.Marshal(v)
		var x any
		if err != nil || json.Unmarshal(b, &x) != nil {
			return "s:" + fmt.Sprint(v)
		}
		if _, ok := x.(float64); !ok {
			if _, ok := x.(string); !ok {
				return "s:" + string(b)
			}
		}
		return idKey(x)
	}
}

const (
	subscriptionIDKey  = "io.modelcontextprotocol/subscriptionId"
	methodAcknowledged = "notifications/subscriptions/acknowledged"
)

// childExitWait bounds how long a stdio session whose transport broke waits
// for the child's exit, so the loss reports the exit status and stderr tail.
var childExitWait = time.Second

func (s *mcpSession) lose(err error) {
	var te *transport.Error
	if s.child != nil && errors.As(err, &te) {
		// A broken stdio transport (EOF, a listen that ended) is usually the
		// child dying: report that instead, with its stderr tail.
		select {
		case <-s.done:
			return
		case <-s.child.exited:
			err = s.child.exitError()
		case <-time.After(childExitWait):
		}
	}
	s.setLost(err)
}

// setLost marks the session lost with err, once.
func (s *mcpSession) setLost(err error) {
	s.loseOnce.Do(func() {
		s.err = err
		close(s.done)
	})
}

func (s *mcpSession) Protocol() string      { return s.protocol }
func (s *mcpSession) Modern() bool          { return s.modern }
func (s *mcpSession) CanSubscribe() bool    { return s.canSub }
func (s *mcpSession) Done() <-chan struct{} { return s.done }

func (s *mcpSession) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

func (s *mcpSession) Subscribe(ctx context.Context, uri string) error {
	return s.classify(s.c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}))
}

func (s *mcpSession) Listen(ctx context.Context, uris []string) ([]string, error) {
	filter := mcp.SubscriptionFilter{ResourceSubscriptions: uris}
	// A previous listen's late acknowledgement must not answer this one.
	select {
	case <-s.acks:
	default:
	}
	lctx, cancel := context.WithCancel(s.ctx)
	s.listMu.Lock()
	s.listGen++
	gen := s.listGen
	s.listMu.Unlock()

	// The stream's end loses the session only once it was acknowledged with
	// something to deliver and while it is still the current listen: a
	// rejected, empty or superseded listen ends without loss.
	var mu sync.Mutex
	var ended, live bool
	var endErr error
	loseIfLive := func() {
		s.listMu.Lock()
		current := s.listGen == gen
		s.listMu.Unlock()
		if !live || !ended || !current {
			return
		}
		err := endErr
		if err == nil {
			err = errors.New("the server closed the subscriptions/listen stream")
		}
		s.lose(fmt.Errorf("listen stream ended: %w", err))
	}
	endedCh := make(chan error, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		err := s.c.Listen(lctx, filter)
		mu.Lock()
		ended, endErr = true, err
		loseIfLive()
		mu.Unlock()
		endedCh <- err
	}()
	onAck := func(list []string) []string {
		mu.Lock()
		live = len(list) > 0
		loseIfLive()
		mu.Unlock()
		return list
	}
	select {
	case list := <-s.acks:
		return onAck(list), nil
	case err := <-endedCh:
		// The acknowledgement is handled on the reader goroutine before the
		// response, so one that came is waiting already.
		select {
		case list := <-s.acks:
			return onAck(list), nil
		default:
		}
		if err == nil {
			return nil, errors.New("the server ended subscriptions/listen without acknowledging it")
		}
		if errors.Is(err, mcp.ErrInvalidParams) {
			return nil, fmt.Errorf("%w: %v", ErrRejected, err)
		}
		return nil, fmt.Errorf("subscriptions/listen: %w", s.classify(err))
	case <-ctx.Done():
		cancel()
		return nil, fmt.Errorf("subscriptions/listen: no acknowledgement: %w", ctx.Err())
	}
}

func (s *mcpSession) Read(ctx context.Context, uri string) ([]event.Content, error) {
	res, err := s.c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	if err != nil {
		if errors.Is(err, mcp.ErrResourceNotFound) || errors.Is(err, mcp.ErrInvalidParams) {
			return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
		}
		return nil, s.classify(err)
	}
	if len(res.Contents) == 0 {
		return nil, fmt.Errorf("%w: empty contents", ErrNotFound)
	}
	out := make([]event.Content, 0, len(res.Contents))
	for _, c := range res.Contents {
		switch c := c.(type) {
		case mcp.TextResourceContents:
			out = append(out, event.Content{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text})
		case mcp.BlobResourceContents:
			if _, err := base64.StdEncoding.DecodeString(c.Blob); err != nil {
				return nil, fmt.Errorf("read %s: blob of %s is not valid base64: %w", uri, c.URI, err)
			}
			out = append(out, event.Content{URI: c.URI, MIMEType: c.MIMEType, Blob: c.Blob})
		}
	}
	return out, nil
}

func (s *mcpSession) Ping(ctx context.Context) error {
	if s.modern {
		// A modern Ping is a no-op in mcp-go; discover is the cheapest real request.
		_, err := s.c.Discover(ctx, mcp.DiscoverRequest{})
		return s.classify(err)
	}
	return s.classify(s.c.Ping(ctx))
}

// classify turns a transport-level failure into ErrSessionLost (and marks
// the session lost); protocol errors pass through.
func (s *mcpSession) classify(err error) error {
	if err == nil {
		return nil
	}
	var te *transport.Error
	if errors.As(err, &te) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		if errors.Is(err, errBodyTooLarge) {
			return err
		}
		s.lose(err)
		return fmt.Errorf("%w: %v", ErrSessionLost, err)
	}
	return err
}

func (s *mcpSession) Close() error {
	s.closeOnce.Do(func() {
		s.setLost(errors.New("closed"))
		s.cancel()
		if s.c != nil {
			_ = s.c.Close() // legacy HTTP: DELETE; stdio: closes stdin
		}
		if s.child != nil {
			s.child.stop()
		}
		s.wg.Wait()
	})
	return nil
}
