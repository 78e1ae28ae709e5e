package dashboard

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
)

// jarStore stands for app.Accounts: it reads the jar with the same
// core.ParseCookieJar, refuses a new account past the plan limit with the
// plan's own message, and keeps the canonical form.
type jarStore struct {
	mu       sync.Mutex
	stored   map[core.Platform][]byte
	accounts int // the plan's accounts per platform
}

func (s *jarStore) SetSession(_ context.Context, _, platform string, jar []byte) (core.Account, int, error) {
	p := core.Platform(platform)
	cookies, err := core.ParseCookieJar(p, jar)
	if err != nil {
		return core.Account{}, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.stored[p]; !ok {
		if err := (core.Limits{AccountsPerPlatform: s.accounts}).CheckNewAccount(core.Usage{Accounts: map[core.Platform]int{}}, p); err != nil {
			return core.Account{}, 0, err
		}
	}
	s.stored[p] = core.EncodeCookieJar(cookies)
	return core.Account{ID: "a-" + platform, Platform: p, HasSession: true}, len(cookies), nil
}

// helperKeys makes ingest keys and remembers the names asked for.
type helperKeys struct {
	mu    sync.Mutex
	names []string
	used  time.Time
}

func (k *helperKeys) CreateAPIKey(context.Context, string, string, []core.Scope) (string, core.Key, error) {
	return "", core.Key{}, core.Errorf(core.KindInvalid, "not here")
}
func (k *helperKeys) CreateIngestKey(_ context.Context, _, name string) (string, core.Key, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.names = append(k.names, name)
	return "esk_ingest_SECRETKEY" + strings.Repeat("x", len(k.names)), core.Key{ID: "k1", Name: name, Kind: core.IngestKey}, nil
}
func (k *helperKeys) List(context.Context, string, core.KeyKind) ([]core.Key, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []core.Key
	for i, n := range k.names {
		out = append(out, core.Key{ID: string(rune('a' + i)), Name: n, Kind: core.IngestKey, LastUsedAt: k.used})
	}
	return out, nil
}
func (k *helperKeys) RevokeOfKind(context.Context, string, core.KeyKind, string) error { return nil }

type jarWorld struct {
	d    *Dashboard
	jars *jarStore
	keys *helperKeys
}

func newJarWorld(t *testing.T, accounts int, limit int, statuses ...health.Status) jarWorld {
	t.Helper()
	if statuses == nil {
		statuses = []health.Status{
			health.StatusOf("", core.Reddit, false, health.Record{}),
			health.StatusOf("", core.X, false, health.Record{}),
			health.StatusOf("a-fb", core.Facebook, true, health.Record{LastIssue: health.LoggedOut, LastCheckedAt: clock0.Add(-2 * time.Hour)}),
		}
	}
	w := jarWorld{jars: &jarStore{stored: map[core.Platform][]byte{}, accounts: accounts}, keys: &helperKeys{}}
	now := clock0
	var err error
	w.d, err = New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return now },
		SiteURL: func() string { return "https://listen.example.com/" }, RateLimit: limit},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{}, Phrases: fakePhrases{}, Accounts: fixedAccounts{statuses},
			Jars: w.jars, Keys: w.keys, Limiter: ratelimit.NewMemory(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// upload posts the jar form as a browser does: multipart, the file in
// "file" or the text in "paste".
func upload(d *Dashboard, platform, site, filename, content string) *httptest.ResponseRecorder {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if filename != "" {
		fw, _ := mw.CreateFormFile("file", filename)
		fw.Write([]byte(content))
		mw.WriteField("paste", "")
	} else {
		mw.CreateFormFile("file", "")
		mw.WriteField("paste", content)
	}
	mw.Close()
	r := httptest.NewRequest("POST", "/app/accounts/"+platform+"/cookies", &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r.Header.Set("Sec-Fetch-Site", site)
	r.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
	w := httptest.NewRecorder()
	d.ServeHTTP(w, r)
	return w
}

// Cookie-Editor's JSON export of x (see core's fixtures for the shape),
// with a cookie of another site; values are made up.
const xEditorJSON = `[
{"domain":".x.com","expirationDate":1798761600.5,"hostOnly":false,"httpOnly":true,"name":"auth_token","path":"/","sameSite":"no_restriction","secure":true,"session":false,"storeId":"0","value":"SECRET-auth"},
{"domain":".x.com","expirationDate":1798761600,"hostOnly":false,"httpOnly":false,"name":"ct0","path":"/","sameSite":"lax","secure":true,"session":false,"storeId":"0","value":"SECRET-ct0"},
{"domain":".example.org","hostOnly":false,"httpOnly":false,"name":"other","path":"/","secure":false,"session":true,"storeId":"0","value":"SECRET-other"}]`

// A cookies.txt of facebook as curl and the "Get cookies.txt LOCALLY"
// extension write it.
const fbCookiesTxt = "# Netscape HTTP Cookie File\n" +
	".facebook.com\tTRUE\t/\tTRUE\t1798761600\tc_user\t100000000000001\n" +
	"#HttpOnly_.facebook.com\tTRUE\t/\tTRUE\t1798761600\txs\tSECRET-xs\n"

func TestJarUpload(t *testing.T) {
	w := newJarWorld(t, 1, 0)
	page := get(w.d, "/app/accounts", true).Body.String()
	s := accountSections(t, page)
	if !strings.Contains(s["x"], `<summary>Connect`) || !strings.Contains(s["x"], `<details class="jar" open>`) {
		t.Fatalf("the x card does not offer to connect:\n%s", s["x"])
	}
	// logged_out asks to reconnect: the form is open and says replace.
	if !strings.Contains(s["facebook"], `<details class="jar" open>`) || !strings.Contains(s["facebook"], "<summary>Replace the cookies") {
		t.Fatalf("the facebook card does not offer to replace the cookies:\n%s", s["facebook"])
	}
	// reddit needs no account: the form is there, closed.
	if !strings.Contains(s["reddit"], `<details class="jar">`) || strings.Contains(s["reddit"], "needs you") {
		t.Fatalf("the reddit card:\n%s", s["reddit"])
	}

	t.Run("json file", func(t *testing.T) {
		r := upload(w.d, "x", "same-origin", "x.com.json", xEditorJSON)
		body := r.Body.String()
		if r.Code != 200 || !strings.Contains(body, "x connected: 2 cookies kept from the upload") {
			t.Fatalf("%d\n%s", r.Code, body)
		}
		if strings.Contains(body, "SECRET") {
			t.Fatal("the answer shows a cookie value")
		}
		if got := string(w.jars.stored[core.X]); !strings.HasPrefix(got, `[{"domain":".x.com","name":"auth_token"`) || strings.Contains(got, "example.org") {
			t.Fatalf("stored %s", got)
		}
	})
	t.Run("pasted cookies.txt", func(t *testing.T) {
		r := upload(w.d, "facebook", "same-origin", "", fbCookiesTxt)
		if r.Code != 200 || !strings.Contains(r.Body.String(), "facebook connected: 2 cookies kept") || strings.Contains(r.Body.String(), "SECRET") {
			t.Fatalf("%d\n%s", r.Code, r.Body.String())
		}
	})
	refusals := []struct {
		name, platform, content, want string
		code                          int
	}{
		{"wrong domain", "reddit", fbCookiesTxt, "no cookie for reddit.com", 400},
		{"missing session cookie", "x", ".x.com\tTRUE\t/\tTRUE\t0\tauth_token\tSECRET-a\n", "no ct0 cookie for x.com or twitter.com", 400},
		{"nothing chosen", "x", "", "choose the exported cookie file, or paste its contents", 400},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			r := upload(w.d, tt.platform, "same-origin", "", tt.content)
			body := r.Body.String()
			if r.Code != tt.code || !strings.Contains(accountSections(t, body)[tt.platform], tt.want) || !strings.Contains(body, `role="alert"`) {
				t.Fatalf("%d\n%s", r.Code, body)
			}
			if strings.Contains(body, "SECRET") {
				t.Fatal("the refusal shows a cookie value")
			}
		})
	}
}

func TestJarUploadPlanLimit(t *testing.T) {
	w := newJarWorld(t, 0, 0)
	r := upload(w.d, "x", "same-origin", "x.json", xEditorJSON)
	if r.Code != 403 || !strings.Contains(accountSections(t, r.Body.String())["x"], "the plan allows 0 accounts per platform") {
		t.Fatalf("%d\n%s", r.Code, r.Body.String())
	}
	if len(w.jars.stored) != 0 {
		t.Fatal("a jar was stored past the plan limit")
	}
}

// The upload is a write like any other: another site cannot post it, and
// it counts against the owner's rate limit of dashboard writes.
func TestJarUploadGuards(t *testing.T) {
	w := newJarWorld(t, 1, 2)
	if r := upload(w.d, "x", "cross-site", "x.json", xEditorJSON); r.Code != http.StatusForbidden || len(w.jars.stored) != 0 {
		t.Fatalf("cross-site upload: %d, stored %d", r.Code, len(w.jars.stored))
	}
	for i := range 2 {
		if r := upload(w.d, "x", "same-origin", "x.json", xEditorJSON); r.Code != 200 {
			t.Fatalf("upload %d: %d", i, r.Code)
		}
	}
	if r := upload(w.d, "x", "same-origin", "x.json", xEditorJSON); r.Code != http.StatusTooManyRequests {
		t.Fatalf("upload past the rate limit: %d", r.Code)
	}
}

// The upload route takes a jar up to core.MaxCookieJar, past the 64 KB
// every other form is held to; a body past its own bound is refused with
// a message and nothing is stored.
func TestJarUploadSize(t *testing.T) {
	w := newJarWorld(t, 1, 0)
	var big strings.Builder
	big.WriteString(fbCookiesTxt)
	for big.Len() < 200<<10 {
		big.WriteString(".example.org\tTRUE\t/\tFALSE\t0\tpadding\t" + strings.Repeat("p", 100) + "\n")
	}
	if r := upload(w.d, "facebook", "same-origin", "all-sites.txt", big.String()); r.Code != 200 {
		t.Fatalf("a 200 KB export: %d\n%s", r.Code, r.Body.String())
	}
	huge := strings.Repeat("#", core.MaxCookieJar+32<<10)
	r := upload(w.d, "x", "same-origin", "huge.txt", huge)
	if r.Code != 400 || !strings.Contains(r.Body.String(), "larger than 256 KB") || w.jars.stored[core.X] != nil {
		t.Fatalf("an oversized upload: %d\n%s", r.Code, r.Body.String())
	}
	// Other forms keep the small bound.
	long := formPost("/app/phrases", map[string][]string{"phrase": {strings.Repeat("a", 70<<10)}}, "same-origin", true)
	rec := httptest.NewRecorder()
	w.d.ServeHTTP(rec, long)
	if rec.Code != 400 {
		t.Fatalf("a 70 KB phrase form: %d", rec.Code)
	}
}

// The "Run a helper" panel gives the command for this deployment and
// makes an ingest key named helper, shown on that answer only.
func TestRunAHelperPanel(t *testing.T) {
	w := newJarWorld(t, 1, 0)
	page := get(w.d, "/app/accounts", true).Body.String()
	cmd := `EARSHOT_HELPER_SERVER=https://listen.example.com EARSHOT_HELPER_KEY_FILE=~/.config/earshot/helper.key earshot helper`
	for _, want := range []string{`value="` + cmd + `"`, "docs/helper.md", "No live ingest key yet", `action="/app/accounts/helper-key"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the panel lacks %q:\n%s", want, page)
		}
	}
	r := httptest.NewRecorder()
	w.d.ServeHTTP(r, formPost("/app/accounts/helper-key", nil, "same-origin", true))
	if r.Code != 200 || !strings.Contains(r.Body.String(), `value="esk_ingest_SECRETKEYx"`) || strings.Join(w.keys.names, ",") != "helper" {
		t.Fatalf("%d %v\n%s", r.Code, w.keys.names, r.Body.String())
	}
	w.keys.used = clock0.Add(-5 * time.Minute)
	again := get(w.d, "/app/accounts", true).Body.String()
	if strings.Contains(again, "SECRETKEY") || !strings.Contains(again, "1 live ingest key, last used") || !strings.Contains(again, "5 min ago") {
		t.Fatalf("after the key was made:\n%s", again)
	}
	r = httptest.NewRecorder()
	w.d.ServeHTTP(r, formPost("/app/accounts/helper-key", nil, "cross-site", true))
	if r.Code != http.StatusForbidden || len(w.keys.names) != 1 {
		t.Fatalf("cross-site key: %d", r.Code)
	}
}

func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"https://listen.example.com":      "https://listen.example.com",
		"http://127.0.0.1:8080":           "http://127.0.0.1:8080",
		"https://a.example/x y":           "'https://a.example/x y'",
		"https://a.example/it's;rm -rf /": `'https://a.example/it'\''s;rm -rf /'`,
	} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", in, got, want)
		}
	}
}
