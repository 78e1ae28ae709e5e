package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/earshothq/earshot/core"
)

// unreadIngest records what each batch left unread, read from the batch
// by judge as app.Ingest reads it, storing nothing of a batch it refuses.
type unreadIngest struct {
	fakeIngest
	judge  func(core.Platform, core.IngestBatch) ([]string, error)
	mu     sync.Mutex
	stored [][]string // what was left unread, per batch accepted
}

// take returns the batches recorded and forgets them.
func (f *unreadIngest) take() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stored
	f.stored = nil
	return s
}

func (f *unreadIngest) IngestBatch(_ context.Context, _ string, b core.IngestBatch) (string, int, int, error) {
	p, err := core.ParsePlatform("platform", b.Platform)
	if err != nil {
		return "", 0, 0, err
	}
	unread, err := f.judge(p, b)
	if err != nil {
		return "", 0, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stored = append(f.stored, unread)
	return "a1", len(b.Posts), 0, nil
}

// postIngest sends body to srv's /ingest with the helper key and returns
// the status and the answer's body.
func postIngest(t *testing.T, srv *httptest.Server, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+"/ingest", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer svc_ingest_one")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// jsonArray returns a JSON array of n copies of elem, itself JSON.
func jsonArray(n int, elem string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = elem
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// refusedNaming reports whether an answer is a 400 invalid_parameter
// whose message starts with field.
func refusedNaming(code int, body, field string) bool {
	var e struct {
		Error struct{ Code, Message string }
	}
	return json.Unmarshal([]byte(body), &e) == nil && code == 400 && e.Error.Code == "invalid_parameter" &&
		strings.HasPrefix(e.Error.Message, field)
}

// unreadCommunities reaches ingest as sent, whatever the case of its
// name, null being none; on reddit a value that is not an array of at
// most core.MaxUnreadCommunities subreddit names is refused with 400
// invalid_parameter naming the field, and on x it is ignored whatever it
// holds, as a batch with it was accepted before the field existed.
func TestIngestUnreadCommunities(t *testing.T) {
	f := &unreadIngest{judge: func(p core.Platform, b core.IngestBatch) ([]string, error) { return b.Unread.On(p) }}
	srv := helperServer(t, HelperConfig{}, f)
	names := func(n int) string { return jsonArray(n, `"r/golang"`) }
	post := func(body string) (int, string) { t.Helper(); return postIngest(t, srv, body) }
	for _, tc := range []struct {
		name, field string
		want        []string // nil: none left unread
	}{
		{"names in every form, repeated", `"unreadCommunities":["SecretClub","r/sales","/r/secretclub/"]`, []string{"sales", "secretclub"}},
		{"the name in another case", `"UnreadCommunities":["secretclub"]`, []string{"secretclub"}},
		{"the last of two", `"unreadCommunities":["a_b"],"unreadCommunities":["sales"]`, []string{"sales"}},
		{"null", `"unreadCommunities":null`, nil},
		{"empty", `"unreadCommunities":[]`, nil},
		{"absent", `"client":"helper/1"`, nil},
		{"at the limit", `"unreadCommunities":` + names(core.MaxUnreadCommunities), []string{"golang"}},
	} {
		code, body := post(`{"platform":"reddit","posts":[],` + tc.field + `}`)
		if got := f.take(); code != 200 || len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
			t.Errorf("%s: %d %s, ingest left %q unread; want 200 and %q", tc.name, code, body, got, tc.want)
		}
	}
	for _, tc := range []struct{ name, value string }{
		{"a string", `"golang"`},
		{"an object", `{"golang":true}`},
		{"a number among names", `["golang",7]`},
		{"null among names", `["golang",null]`},
		{"an array among names", `["golang",["sales"]]`},
		{"one name too many", names(core.MaxUnreadCommunities + 1)},
		{"not a subreddit name", `["golang","<script>"]`},
		{"a name too long", `["` + strings.Repeat("a", 22) + `"]`},
		{"a name too short", `["ab"]`},
	} {
		code, body := post(`{"platform":"reddit","posts":[{"externalId":"t3_a","body":["acme"],"url":"https://www.reddit.com/r/golang/comments/a/","community":"golang"}],"unreadCommunities":` + tc.value + `}`)
		if !refusedNaming(code, body, "unreadCommunities") || len(f.take()) != 0 {
			t.Errorf("%s: %d %s; want 400 invalid_parameter naming unreadCommunities, nothing stored", tc.name, code, body)
		}
		if strings.Contains(body, "<script>") {
			t.Errorf("%s: the answer repeats what was sent: %s", tc.name, body)
		}
	}
	// x and facebook have no communities: ignored, whatever it holds.
	for _, v := range []string{`"golang"`, `[7]`, names(core.MaxUnreadCommunities + 1)} {
		code, body := post(`{"platform":"x","posts":[],"unreadCommunities":` + v + `}`)
		if got := f.take(); code != 200 || len(got) != 1 || got[0] != nil {
			t.Errorf("x with unreadCommunities %.40s: %d %s", v, code, body)
		}
	}
}

// readIngest keeps at most one name past the limit, however many a
// body holds: the names a body can make the server hold are bounded.
func TestReadIngestBoundsUnreadNames(t *testing.T) {
	body := `{"platform":"reddit","unreadCommunities":[` + strings.Repeat(`"golang",`, 50000) + `"golang"]}`
	got, err := readIngest([]byte(body))
	if err != nil || !got.unread.Over || len(got.unread.Names) > core.MaxUnreadCommunities {
		t.Fatalf("readIngest = over %t, %d names, %v; want over, at most %d names", got.unread.Over, len(got.unread.Names), err, core.MaxUnreadCommunities)
	}
}
