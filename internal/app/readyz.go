package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

type serverReport struct {
	Name        string      `json:"name"`
	Phase       string      `json:"phase"`
	Protocol    string      `json:"protocol,omitempty"`
	Attempt     int         `json:"attempt,omitempty"`
	NextAttempt *time.Time  `json:"next_attempt,omitempty"`
	LastError   string      `json:"last_error,omitempty"`
	Sessions    int         `json:"sessions"`
	Problems    []uriReport `json:"problems,omitempty"`
}

type uriReport struct {
	URI     string `json:"uri"`
	Problem string `json:"problem"`
}

// readyz answers 200 when ready and 503 otherwise, with every server's state.
func (a *App) readyz(w http.ResponseWriter, _ *http.Request) {
	body := struct {
		Ready   bool           `json:"ready"`
		NATS    bool           `json:"nats"`
		Servers []serverReport `json:"servers"`
	}{Ready: a.Ready(), NATS: a.Publisher() != nil && a.Publisher().Ready()}
	for _, s := range a.Status() {
		r := serverReport{Name: s.Server, Phase: string(s.State.Phase), Protocol: s.Protocol, Attempt: s.State.Attempt,
			LastError: s.State.LastError, Sessions: s.State.Sessions}
		if !s.State.NextAttempt.IsZero() {
			t := s.State.NextAttempt
			r.NextAttempt = &t
		}
		for _, u := range s.URIs {
			if u.Problem != "" {
				r.Problems = append(r.Problems, uriReport{URI: u.URI, Problem: u.Problem})
			}
		}
		body.Servers = append(body.Servers, r)
	}
	w.Header().Set("Content-Type", "application/json")
	if !body.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(body)
}

// redact drops credentials from a NATS URL for logs.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = url.User("redacted")
	return u.String()
}
