package legacymock

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Seeded ids the tests lean on.
const (
	fbAccount     = defaultAccountID
	redditAccount = "account-1714561200000-r8m2vd"
	fbJoined      = "fb-austinsmallbusiness"     // accepted, 3 questions
	fbPending     = "fb-salonownersnetwork"      // pending, 3 questions
	fbOpen        = "fb-yogastudioowners"        // none, 1 question
	fbNoQuestions = "fb-remoteworkcommunity"     // none, no questions
	xList         = "x-list-1402938475610234881" // none
	redditJoined  = "r-smallbusiness"
	redditOpen    = "r-entrepreneur"
)

// fixedNow is the clock of tests that check timestamps.
var fixedNow = time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC)

type client struct {
	t    testing.TB
	base string
	http *http.Client
}

// newClient serves a fresh mock behind httptest and returns a client for
// it. cfg.Now defaults to the fixed clock.
func newClient(t testing.TB, cfg Config) *client {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return fixedNow }
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &client{t: t, base: srv.URL, http: srv.Client()}
}

// resp is a decoded answer.
type resp struct {
	status int
	body   map[string]any
	raw    string
}

// errMsg is the error envelope's message.
func (r resp) errMsg() string {
	s, _ := r.body["error"].(string)
	return s
}

func (r resp) obj(key string) map[string]any {
	m, _ := r.body[key].(map[string]any)
	return m
}

func (r resp) list(key string) []map[string]any {
	var out []map[string]any
	l, _ := r.body[key].([]any)
	for _, x := range l {
		m, _ := x.(map[string]any)
		out = append(out, m)
	}
	return out
}

// do sends body (a string is sent as is, anything else as JSON; nil sends
// nothing) and decodes the JSON answer.
func (c *client) do(method, path string, body any) resp {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	r := resp{status: res.StatusCode, raw: string(data)}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		c.t.Fatalf("%s %s: content type %q, body %s", method, path, ct, data)
	}
	if err := json.Unmarshal(data, &r.body); err != nil {
		c.t.Fatalf("%s %s: answer is not a JSON object: %s", method, path, data)
	}
	return r
}

// must is do that fails the test unless the status is want.
func (c *client) must(want int, method, path string, body any) resp {
	c.t.Helper()
	r := c.do(method, path, body)
	if r.status != want {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, want, r.raw)
	}
	return r
}

// fails checks a failure's status and, when msg is not empty, its exact
// message.
func (c *client) fails(status int, msg, method, path string, body any) resp {
	c.t.Helper()
	r := c.must(status, method, path, body)
	if len(r.body) != 1 || r.errMsg() == "" {
		c.t.Fatalf("%s %s: not an error envelope: %s", method, path, r.raw)
	}
	if msg != "" && r.errMsg() != msg {
		c.t.Fatalf("%s %s: error %q, want %q", method, path, r.errMsg(), msg)
	}
	return r
}

func find(list []map[string]any, key, val string) map[string]any {
	for _, m := range list {
		if m[key] == val {
			return m
		}
	}
	return nil
}
