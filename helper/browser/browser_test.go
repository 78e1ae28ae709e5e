package browser

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func start(t *testing.T, o Options) *Browser {
	t.Helper()
	if _, err := os.Stat(DefaultExecPath); err != nil {
		if os.Getenv("EARSHOT_TEST_BROWSER") != "" {
			t.Fatalf("EARSHOT_TEST_BROWSER is set but there is no Chromium at %s", DefaultExecPath)
		}
		t.Skipf("no Chromium at %s (apt-get install -y chromium): browser test skipped", DefaultExecPath)
	}
	o.NoSandbox = os.Geteuid() == 0
	b, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// site serves a page whose script asks /api/<what>: "small" a JSON
// answer, "huge" one over the size cap, "endless" a body that never ends.
func site(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<!doctype html><script>fetch("/api/`+r.URL.Query().Get("what")+`")</script>`)
		case "/api/small":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true}`)
		case "/api/huge":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"pad":"`+strings.Repeat("a", 300<<10)+`"}`)
		case "/api/endless":
			w.Header().Set("Content-Type", "application/json")
			chunk := []byte(strings.Repeat(" ", 32<<10))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func pages(t *testing.T, b *Browser) int {
	ts, err := chromedp.Targets(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ti := range ts {
		if ti.Type == "page" {
			n++
		}
	}
	return n
}

func TestReadKeepsMatchingAnswersAndClosesItsTab(t *testing.T) {
	b := start(t, Options{MaxBody: 100 << 10, MaxPage: 8 << 20, Timeout: 20 * time.Second})
	srv := site(t)
	before := pages(t, b)
	match := func(u string) bool { return strings.Contains(u, "/api/") }
	p, err := b.Read(context.Background(), Request{URL: srv.URL + "/page?what=small", Match: match})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != 200 || !strings.HasSuffix(p.URL, "/page?what=small") || len(p.Answers) != 1 || string(p.Answers[0].Body) != `{"ok":true}` || p.CutOff != "" {
		t.Fatalf("page %+v", p)
	}
	// An answer over the size cap is kept without its body.
	p, err = b.Read(context.Background(), Request{URL: srv.URL + "/page?what=huge", Match: match})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Answers) != 1 || p.Answers[0].Body != nil || p.Answers[0].Status != 200 {
		t.Fatalf("huge answer kept as %d answers, body %d bytes", len(p.Answers), len(p.Answers[0].Body))
	}
	if n := pages(t, b); n != before {
		t.Errorf("%d tabs open after two reads, %d before", n, before)
	}
}

func TestEndlessAnswerIsCutOff(t *testing.T) {
	b := start(t, Options{MaxPage: 1 << 20, Timeout: 20 * time.Second})
	srv := site(t)
	p, err := b.Read(context.Background(), Request{URL: srv.URL + "/page?what=endless", Match: func(u string) bool { return strings.Contains(u, "/api/") }})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.CutOff, "bytes") || len(p.Answers) != 0 {
		t.Fatalf("cut off %q, answers %d", p.CutOff, len(p.Answers))
	}
}
