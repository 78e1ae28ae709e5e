package x_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// proxyMark is the header the test proxy adds to every request it
// forwards: the fake x refuses a request without it, so a request sent
// around the proxy fails the read and is counted.
const proxyMark = "X-Earshot-Test-Proxy"

// fakeX serves x's search page and its SearchTimeline answers. The page
// is what matters of x's web client here: an HTML document whose script
// asks /i/api/graphql/<queryId>/SearchTimeline, shows each tweet, and
// asks the next page with the last answer's Bottom cursor when it is
// scrolled to its end. The answers are testdata's (their origin is in
// testdata/README.md: x's web client's GraphQL SearchTimeline answers,
// as open-source clients such as twscrape decode them), served by
// cursor: the first page for none; then, by default, the end of the
// results; after allPages, pages 2 to 4 and then the end.
type fakeX struct {
	srv      *httptest.Server
	answer   []byte
	pages    atomic.Value // map[string][]byte: cursor → answer
	end      []byte
	mode     atomic.Value // "", "login", "checkpoint", "captcha", "ratelimit", "ratelimit-later" (pages after the first)
	refuse   atomic.Value // string: the query whose search meets the checkpoint, whatever mode says
	reset    int64        // the x-rate-limit-reset a 429 names
	served   atomic.Int64
	unmarked atomic.Int64
	mu       sync.Mutex
	cookies  []string // the auth_token values the search page saw
	queries  []string
	cursors  []string // the cursor of each SearchTimeline asked, "" for the first page
}

func newFakeX(t testing.TB) *fakeX {
	b, err := os.ReadFile("testdata/search_timeline.json")
	if err != nil {
		t.Fatal(err)
	}
	end, err := os.ReadFile("testdata/search_timeline_end.json")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeX{answer: b, end: end}
	f.pages.Store(map[string][]byte{"": b})
	f.mode.Store("")
	f.refuse.Store("")
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// allPages serves four pages of results: testdata's first and second
// pages, and a third and fourth made from the second with older ids,
// each naming the next by its Bottom cursor.
func (f *fakeX) allPages(t testing.TB) {
	p2, err := os.ReadFile("testdata/search_timeline_page2.json")
	if err != nil {
		t.Fatal(err)
	}
	older := func(ids, from, to string) []byte {
		b := bytes.ReplaceAll(p2, []byte("186000000000000001"), []byte(ids))
		return bytes.ReplaceAll(b, []byte(`"value":"`+from+`"`), []byte(`"value":"`+to+`"`))
	}
	f.pages.Store(map[string][]byte{
		"":            f.answer,
		"DAACCgACGdy": p2,
		"DAACCgACGdz": older("185900000000000001", "DAACCgACGdz", "DAACCgACGd0"),
		"DAACCgACGd0": older("185800000000000001", "DAACCgACGdz", "DAACCgACGd1"),
	})
}

// Cursors returns the cursors of the SearchTimeline pages asked.
func (f *fakeX) Cursors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cursors...)
}

const searchPage = `<!doctype html><html><head><title>Search / X</title></head><body style="margin:0"><div id="react-root"></div>
<script>
const q = new URLSearchParams(location.search).get("q");
let cursor = null, loading = false, more = true;
function load() {
  loading = true;
  const v = {rawQuery: q, count: 20, product: "Latest"};
  if (cursor) v.cursor = cursor;
  fetch("/i/api/graphql/nK1dw4oV3k4w5TdtcAdSww/SearchTimeline?variables=" + encodeURIComponent(JSON.stringify(v)), {credentials: "include"})
    .then(r => r.json()).then(j => {
      let n = 0;
      for (const i of j.data.search_by_raw_query.search_timeline.timeline.instructions) {
        for (const e of (i.entries || []).concat(i.entry ? [i.entry] : [])) {
          if (e.content.cursorType === "Bottom") { cursor = e.content.value; continue; }
          const a = document.createElement("article");
          a.style.height = "1000px";
          a.textContent = e.entryId;
          document.getElementById("react-root").appendChild(a);
          n++;
        }
      }
      more = n > 0;
      loading = false;
    });
}
load();
addEventListener("scroll", () => {
  if (more && !loading && innerHeight + scrollY >= document.body.scrollHeight - 200) load();
});
</script></body></html>`

// arkosePage is the shape of x's Arkose Labs challenge interstitial: the
// page loads Arkose's FunCaptcha client in place of the timeline.
const arkosePage = `<!doctype html><html><head><title>X</title>
<script src="https://client-api.arkoselabs.com/v2/2CB16598-CB82-4CF7-B332-5990DB66F3AB/api.js"></script></head>
<body><div id="arkose_iframe" data-funcaptcha="1">Verify you are human</div></body></html>`

func (f *fakeX) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(proxyMark) == "" {
		f.unmarked.Add(1)
		http.Error(w, "not through the proxy", http.StatusBadGateway)
		return
	}
	f.served.Add(1)
	mode := f.mode.Load().(string)
	switch {
	case r.URL.Path == "/search":
		c, _ := r.Cookie("auth_token")
		f.mu.Lock()
		if c != nil {
			f.cookies = append(f.cookies, c.Value)
		}
		f.queries = append(f.queries, r.URL.Query().Get("q")+"|"+r.URL.Query().Get("f"))
		f.mu.Unlock()
		if q := f.refuse.Load().(string); q != "" && q == r.URL.Query().Get("q") {
			mode = "checkpoint"
		}
		switch mode {
		case "login":
			http.Redirect(w, r, "/i/flow/login?redirect_after_login=%2Fsearch", http.StatusFound)
		case "checkpoint":
			http.Redirect(w, r, "/account/access", http.StatusFound)
		case "captcha":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, arkosePage)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, searchPage)
		}
	case strings.HasSuffix(r.URL.Path, "/SearchTimeline"):
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		var v struct{ Cursor string }
		json.Unmarshal([]byte(r.URL.Query().Get("variables")), &v)
		f.mu.Lock()
		f.cursors = append(f.cursors, v.Cursor)
		f.mu.Unlock()
		if mode == "ratelimit" || (mode == "ratelimit-later" && v.Cursor != "") {
			w.Header().Set("x-rate-limit-limit", "50")
			w.Header().Set("x-rate-limit-remaining", "0")
			w.Header().Set("x-rate-limit-reset", fmt.Sprint(f.reset))
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"errors":[{"code":88,"message":"Rate limit exceeded."}]}`)
			return
		}
		page, ok := f.pages.Load().(map[string][]byte)[v.Cursor]
		if !ok {
			page = f.end
		}
		w.Write(page)
	case r.URL.Path == "/i/flow/login":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><html><body><div id="react-root">Sign in to X</div></body></html>`)
	case r.URL.Path == "/account/access":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, arkosePage)
	default:
		http.NotFound(w, r)
	}
}

// forwardProxy is a loopback HTTP forward proxy that asks for
// credentials (407) and counts what it forwards, marking each request.
type forwardProxy struct {
	srv       *httptest.Server
	user, pw  string
	forwarded atomic.Int64
	refused   atomic.Int64
}

func newForwardProxy(t testing.TB) *forwardProxy {
	p := &forwardProxy{user: "helper", pw: "s3cret"}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// URL is the proxy's address with its credentials, as GET /proxy gives it.
func (p *forwardProxy) URL() *url.URL {
	u, _ := url.Parse(p.srv.URL)
	u.User = url.UserPassword(p.user, p.pw)
	return u
}

func (p *forwardProxy) serve(w http.ResponseWriter, r *http.Request) {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(p.user+":"+p.pw))
	if r.Header.Get("Proxy-Authorization") != want {
		p.refused.Add(1)
		w.Header().Set("Proxy-Authenticate", `Basic realm="earshot-test"`)
		w.WriteHeader(http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect || !r.URL.IsAbs() {
		http.Error(w, "this test proxy forwards plain http only", http.StatusMethodNotAllowed)
		return
	}
	p.forwarded.Add(1)
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Authorization")
	out.Header.Del("Proxy-Connection")
	out.Header.Set(proxyMark, "1")
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}
