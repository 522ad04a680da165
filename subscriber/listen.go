package subscriber

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// listenAll opens the session's one subscriptions/listen stream for sts and
// returns, per URI, why it is not watched ("" or absent: watched). A server
// that fails the whole listen with INVALID_PARAMS because of some URIs
// (mcp-protocol.md §6.3) gets the listen again without them: the offenders
// are those its error message names or, failing that, those a listen of
// their own is refused for. Only a lost session, an acknowledgement
// timeout or a refusal no URI explains fail the attempt.
func (w *Watcher) listenAll(ctx context.Context, sess Session, sts []*uriState) (map[*uriState]string, error) {
	problems := map[*uriState]string{}
	pending := sts
	for len(pending) > 0 {
		acked, err := w.listenOnce(ctx, sess, pending)
		if err == nil {
			honoured := make(map[string]bool, len(acked))
			for _, u := range acked {
				honoured[u] = true
				honoured[canonicalURI(u)] = true
			}
			for _, st := range pending {
				if !honoured[st.sub.URI] && !honoured[canonicalURI(st.sub.URI)] {
					problems[st] = "the server did not acknowledge this URI in subscriptions/listen, so it sends no updates for it; nothing is read"
				}
			}
			return problems, nil
		}
		if !errors.Is(err, ErrRejected) {
			return nil, err
		}
		offenders := namedIn(err.Error(), pending)
		if len(offenders) == 0 && len(pending) == 1 {
			offenders = pending
		}
		if len(offenders) == 0 {
			var perr error
			if offenders, perr = w.probeListen(ctx, sess, pending); perr != nil {
				return nil, perr
			}
		}
		if len(offenders) == 0 {
			return nil, fmt.Errorf("subscriptions/listen: %w (no single URI is refused on its own)", err)
		}
		for _, st := range offenders {
			problems[st] = "the server rejected this URI in subscriptions/listen (" + err.Error() + "); check the URI"
		}
		pending = without(pending, offenders)
	}
	return problems, nil
}

// listenOnce is one Listen bounded by the acknowledgement timeout.
func (w *Watcher) listenOnce(ctx context.Context, sess Session, sts []*uriState) ([]string, error) {
	uris := make([]string, len(sts))
	for i, st := range sts {
		uris[i] = st.sub.URI
	}
	actx, cancel := context.WithTimeout(ctx, w.opts.AckTimeout)
	defer cancel()
	acked, err := sess.Listen(actx, uris)
	if err != nil && actx.Err() != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("subscriptions/listen: the server sent no acknowledgement within %s: %w", w.opts.AckTimeout, err)
	}
	return acked, err
}

// probeListen listens for each URI alone and returns those refused. Each
// listen supersedes the previous one; the caller's next listen replaces the
// last.
func (w *Watcher) probeListen(ctx context.Context, sess Session, sts []*uriState) ([]*uriState, error) {
	var bad []*uriState
	for _, st := range sts {
		_, err := w.listenOnce(ctx, sess, []*uriState{st})
		switch {
		case errors.Is(err, ErrRejected):
			bad = append(bad, st)
		case err != nil:
			return nil, err
		}
	}
	return bad, nil
}

// namedIn returns the states whose URI msg names, as a whole token (so
// test://a does not match inside test://ab).
func namedIn(msg string, sts []*uriState) []*uriState {
	var out []*uriState
	for _, st := range sts {
		rest := msg
		for {
			i := strings.Index(rest, st.sub.URI)
			if i < 0 {
				break
			}
			end := i + len(st.sub.URI)
			if end == len(rest) || strings.ContainsRune(" \t\n\"'`,;)]}>", rune(rest[end])) {
				out = append(out, st)
				break
			}
			rest = rest[end:]
		}
	}
	return out
}

func without(sts, drop []*uriState) []*uriState {
	out := make([]*uriState, 0, len(sts))
	for _, st := range sts {
		keep := true
		for _, d := range drop {
			if d == st {
				keep = false
			}
		}
		if keep {
			out = append(out, st)
		}
	}
	return out
}
