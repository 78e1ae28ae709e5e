package httpapi

import (
	"reflect"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// unreadPhrases reaches ingest as sent on every platform, whatever the
// case of its name, null being none; a value that is not an array of at
// most core.MaxUnreadPhrases strings is refused with 400
// invalid_parameter naming the field, on x, facebook and reddit alike.
func TestIngestUnreadPhrases(t *testing.T) {
	f := &unreadIngest{judge: func(_ core.Platform, b core.IngestBatch) ([]string, error) { return b.UnreadPhrases.Keys() }}
	srv := helperServer(t, HelperConfig{}, f)
	texts := func(n int) string { return jsonArray(n, `"Acme CRM"`) }
	post := func(body string) (int, string) { t.Helper(); return postIngest(t, srv, body) }
	for _, pl := range []string{"x", "facebook", "reddit"} {
		for _, tc := range []struct {
			name, field string
			want        []string // nil: none left unread
		}{
			{"texts as sent, repeated", `"unreadPhrases":["acme crm"," Acme  CRM ","beta"]`, []string{"acme crm", "beta"}},
			{"the name in another case", `"UnreadPhrases":["beta"]`, []string{"beta"}},
			{"the last of two", `"unreadPhrases":["acme"],"unreadPhrases":["beta"]`, []string{"beta"}},
			{"texts that are no phrase", `"unreadPhrases":["","   ","<script>` + strings.Repeat("a", core.MaxPhraseLen) + `"]`, []string{}},
			{"null", `"unreadPhrases":null`, nil},
			{"empty", `"unreadPhrases":[]`, nil},
			{"absent", `"client":"helper/1"`, nil},
			{"with unreadCommunities", `"unreadCommunities":["golang"],"unreadPhrases":["beta"]`, []string{"beta"}},
			{"at the limit", `"unreadPhrases":` + texts(core.MaxUnreadPhrases), []string{"acme crm"}},
		} {
			code, body := post(`{"platform":"` + pl + `","posts":[],` + tc.field + `}`)
			if got := f.take(); code != 200 || len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Errorf("%s, %s: %d %s, ingest left %q unread; want 200 and %q", pl, tc.name, code, body, got, tc.want)
			}
		}
		for _, tc := range []struct{ name, value string }{
			{"a string", `"acme"`},
			{"an object", `{"acme":true}`},
			{"a number among texts", `["acme",7]`},
			{"null among texts", `["acme",null]`},
			{"an array among texts", `["acme",["beta"]]`},
			{"one text too many", texts(core.MaxUnreadPhrases + 1)},
			{"too many, then not a string", texts(core.MaxUnreadPhrases+1) + `,"unreadPhrases":["<script>",{}]`},
		} {
			code, body := post(`{"platform":"` + pl + `","posts":[{"externalId":"1","body":["acme"],"url":"https://x.com/a/status/1","community":"golang"}],"unreadPhrases":` + tc.value + `}`)
			if !refusedNaming(code, body, "unreadPhrases") || len(f.take()) != 0 {
				t.Errorf("%s, %s: %d %s; want 400 invalid_parameter naming unreadPhrases, nothing stored", pl, tc.name, code, body)
			}
			if strings.Contains(body, "<script>") {
				t.Errorf("%s, %s: the answer repeats what was sent: %s", pl, tc.name, body)
			}
		}
	}
}

// readIngest keeps at most one text past the limit, however many a body
// holds: the texts a body can make the server hold are bounded.
func TestReadIngestBoundsUnreadPhrases(t *testing.T) {
	body := `{"platform":"x","unreadPhrases":[` + strings.Repeat(`"acme",`, 50000) + `"acme"]}`
	got, err := readIngest([]byte(body))
	if err != nil || !got.unreadPhrases.Over || len(got.unreadPhrases.Texts) > core.MaxUnreadPhrases {
		t.Fatalf("readIngest = over %t, %d texts, %v; want over, at most %d texts", got.unreadPhrases.Over, len(got.unreadPhrases.Texts), err, core.MaxUnreadPhrases)
	}
	// And one that fits keeps every text, in order.
	got, err = readIngest([]byte(`{"platform":"x","unreadPhrases":["b","a","b"]}`))
	if err != nil || !reflect.DeepEqual(got.unreadPhrases, core.UnreadPhrases{Texts: []string{"b", "a", "b"}}) {
		t.Fatalf("readIngest = %+v, %v", got.unreadPhrases, err)
	}
}
