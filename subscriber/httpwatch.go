package subscriber

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// lossWatcher is the http.RoundTripper under a session's HTTP client. mcp-go
// reports a lost connection only for SSE; this sees every kind on every
// HTTP transport and reports it through onLoss:
//   - 404 for our session id (the spec's "session expired"), or a 400 whose
//     body talks about the session (server-everything answers that way);
//   - the server-to-client GET stream failing to connect, ending, or opening
//     a second time (mcp-go silently reopens it after a server restart that
//     forgot our session, and all subscriptions with it).
//
// It also caps non-streaming response bodies at maxBody bytes, so a hostile
// server cannot make us buffer without bound.
type lossWatcher struct {
	base     http.RoundTripper
	onLoss   func(error)
	maxBody  int64
	getOpens atomic.Int32
	// getUp is closed when the GET stream first opens (200) or is refused
	// (405: the server offers none), so dial can wait for it.
	getUp     chan struct{}
	getUpOnce sync.Once
	noGET     atomic.Bool
}

func (w *lossWatcher) getSettled(refused bool) {
	w.getUpOnce.Do(func() {
		w.noGET.Store(refused)
		if w.getUp != nil {
			close(w.getUp)
		}
	})
}

func (w *lossWatcher) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(req)
	isGET := req.Method == http.MethodGet
	if err != nil {
		if isGET && req.Context().Err() == nil {
			w.onLoss(fmt.Errorf("server-to-client stream: %w", err))
		}
		return resp, err
	}
	hasSession := req.Header.Get("Mcp-Session-Id") != ""
	switch {
	case resp.StatusCode == http.StatusNotFound && hasSession:
		w.onLoss(errors.New("the server no longer knows our session (HTTP 404)"))
	case resp.StatusCode == http.StatusBadRequest && hasSession:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
		if strings.Contains(strings.ToLower(string(body)), "session") {
			w.onLoss(fmt.Errorf("the server rejected our session (HTTP 400: %s)", firstLine(body)))
		}
	case isGET && resp.StatusCode == http.StatusMethodNotAllowed:
		w.getSettled(true)
	case isGET && resp.StatusCode == http.StatusOK:
		w.getSettled(false)
		if w.getOpens.Add(1) > 1 {
			w.onLoss(errors.New("the server-to-client stream reconnected; the server may have restarted and forgotten our subscriptions"))
		}
		resp.Body = &watchedBody{ReadCloser: resp.Body, onEnd: func(err error) {
			if req.Context().Err() == nil {
				w.onLoss(fmt.Errorf("server-to-client stream ended: %w", err))
			}
		}}
	case !isGET && w.maxBody > 0 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: w.maxBody}
	}
	return resp, nil
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// watchedBody reports the first read error (io.EOF included) of a stream.
type watchedBody struct {
	io.ReadCloser
	onEnd func(error)
	ended atomic.Bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && b.ended.CompareAndSwap(false, true) {
		b.onEnd(err)
	}
	return n, err
}

// errBodyTooLarge ends a response that exceeds the session's cap.
var errBodyTooLarge = errors.New("response body exceeds the size limit")

type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
