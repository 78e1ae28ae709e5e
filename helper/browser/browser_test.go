package browser

import (
	"context"
	"errors"
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

// feed serves a page that loads /api/feed?page=1 and, each time it is
// scrolled to its end, the next page, as an endless feed's web client
// does; "stuck" pages never ask for more.
func feed(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/feed", "/stuck":
			more := r.URL.Path == "/feed"
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<!doctype html><body style="margin:0"><div id="items"></div><script>
let page = 0, loading = false;
function load() {
  loading = true; page++;
  fetch("/api/feed?page=" + page).then(r => r.json()).then(j => {
    const d = document.createElement("div"); d.style.height = "3000px"; d.textContent = j.page;
    document.getElementById("items").appendChild(d); loading = false;
  });
}
load();
window.addEventListener("scroll", () => {
  if (`+map[bool]string{true: "true", false: "false"}[more]+` && !loading && window.innerHeight + window.scrollY >= document.body.scrollHeight - 10) load();
});
</script></body>`)
		case "/api/feed":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"page":`+r.URL.Query().Get("page")+`}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// More scrolls the page for the next answers, after the wait it gives,
// until it says the read has enough.
func TestReadScrollsForMore(t *testing.T) {
	b := start(t, Options{Timeout: 20 * time.Second})
	srv := feed(t)
	waits := 0
	p, err := b.Read(context.Background(), Request{
		URL:   srv.URL + "/feed",
		Match: func(u string) bool { return strings.Contains(u, "/api/feed") },
		Done:  func(p *Page) bool { return len(p.Answers) > p.Scrolls },
		More: func(p *Page) func(context.Context) error {
			if len(p.Answers) == 3 {
				return nil
			}
			return func(context.Context) error { waits++; return nil }
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Answers) != 3 || p.Scrolls != 2 || waits != 2 || p.CutOff != "" {
		t.Fatalf("%d answers, %d scrolls, %d waits, cut off %q", len(p.Answers), p.Scrolls, waits, p.CutOff)
	}
	for i, a := range p.Answers {
		if want := `{"page":` + string(rune('1'+i)) + `}`; string(a.Body) != want {
			t.Errorf("answer %d: %s, want %s", i, a.Body, want)
		}
	}
}

// A scrolled page that asks for nothing more is cut off after
// ScrollTimeout with what it had; a wait that fails ends the read with
// its error.
func TestReadScrollThatLoadsNothingIsCutOff(t *testing.T) {
	b := start(t, Options{Timeout: 20 * time.Second, ScrollTimeout: 500 * time.Millisecond})
	srv := feed(t)
	req := Request{
		URL:   srv.URL + "/stuck",
		Match: func(u string) bool { return strings.Contains(u, "/api/feed") },
		Done:  func(p *Page) bool { return len(p.Answers) > p.Scrolls },
		More:  func(*Page) func(context.Context) error { return func(context.Context) error { return nil } },
	}
	p, err := b.Read(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Answers) != 1 || p.Scrolls != 1 || p.CutOff != "time" {
		t.Fatalf("%d answers, %d scrolls, cut off %q", len(p.Answers), p.Scrolls, p.CutOff)
	}
	paused := errors.New("paused")
	req.More = func(*Page) func(context.Context) error { return func(context.Context) error { return paused } }
	if _, err := b.Read(context.Background(), req); !errors.Is(err, paused) {
		t.Fatalf("a failed wait: %v", err)
	}
}
