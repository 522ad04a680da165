package subscriber

import "github.com/mcpwatch/watcher/reconnect"

// Status is a snapshot of one server's state for logs, /readyz and the
// operations endpoints.
type Status struct {
	Server   string
	Protocol string // negotiated in the latest session
	State    reconnect.State
	URIs     []URIStatus
}

// URIStatus is one subscription's state.
type URIStatus struct {
	URI     string
	Watched bool   // subscribed in the current session
	Problem string // why it is not watched, or the last read problem
}

// Status returns a snapshot; safe for concurrent use.
func (w *Watcher) Status() Status {
	w.mu.Lock()
	s := Status{Server: w.srv.Name, Protocol: w.protocol, State: w.sup.State()}
	w.mu.Unlock()
	w.q.mu.Lock()
	s.URIs = make([]URIStatus, len(w.states))
	for i, st := range w.states {
		s.URIs[i] = URIStatus{URI: st.sub.URI, Watched: st.watched, Problem: st.problem}
	}
	w.q.mu.Unlock()
	return s
}

// Ready reports whether the server's session is established.
func (w *Watcher) Ready() bool { return w.sup.State().Phase == reconnect.PhaseConnected }
