package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// ingestBodies are bodies on which parseIngest must agree with
// encoding/json; fast says whether it should take them at all.
var ingestBodies = []struct {
	body string
	fast bool
}{
	{`{"platform":"x","posts":[{"externalId":"1","authorName":"a","body":["hi"],"url":"https://x.com/1","likes":3,"comments":0}]}`, true},
	{`{"platform":"x","posts":[]}`, true},
	{`{"platform":"x"}`, true},
	{"\t{ \"platform\" : \"x\" ,\r\n \"posts\" : [ { } , null ] }\n", true},
	{`{"PLATFORM":"x","Posts":[{"EXTERNALID":"1","Body":["a"],"URL":"https://x.com/1","LIKES":3,"authorNAME":"b"}]}`, true},
	{`{"platform":"x","posts":[{"externalId":"1","body":["a\nb \"q\" \\ \/","\u00e9\ud83d\ude00","\ud800 lone"],"url":"https://x.com/1"}]}`, true},
	{"{\"platform\":\"x\",\"posts\":[{\"externalId\":\"\xff\xfe\",\"body\":[\"a\xc3\",\"\xed\xa0\x80\"],\"authorName\":\"é—ok\"}]}", true},
	{`{"platform":"x","posts":[null,{"externalId":null,"body":null,"likes":null,"comments":null,"url":null},{"body":[null,"a"]},{"body":[]}]}`, true},
	{`{"extra":{"a":[1,2,{"b":null}],"c":"\"q\"","ſ":0},"platform":"x","posts":[{"title":"t","x":[true,false,-1.5e-3,0,1E+2]}]}`, true},
	{`{"platform":"x","posts":[{"likes":-0,"comments":9223372036854775807}]}`, true},
	{`{"platform":"reddit","posts":[{"title":"T\u00e9","postedAt":1767225600123.456,"community":"r/SaaS"},{"postedAt":-0},{"postedAt":1.5e12},{"POSTEDAT":0,"Title":null,"community":null},{"postedAt":null}]}`, true},
	{`{"platform":"x","posts":[{"postedAt":1e400}]}`, false},
	{`{"platform":"x","posts":[{"postedAt":"1"}]}`, false},
	{`{"platform":"x","posts":[{"postedAt":01}]}`, false},
	{`{"platform":"x","posts":[{"postedAt":1,"postedAt":2}]}`, false},
	{`{"platform":"x","posts":[{"title":["t"]}]}`, false},
	{`{"platform":"x","posts":[{"community":1}]}`, false},
	{`{"platform":"x\u0000","posts":[]}`, true},
	{`{"platform":"x","platform":"y"}`, false},
	{`{"platform":"x","posts":[],"posts":[]}`, false},
	{`{"platform":"x","posts":[{"likes":1,"likes":2}]}`, false},
	{`{"platform":"x","posts":[{"externalId":"1","EXTERNALID":"2"}]}`, false},
	{`{"platform":"x","posts":[{"likes":1.0}]}`, false},
	{`{"platform":"x","posts":[{"likes":1e2}]}`, false},
	{`{"platform":"x","posts":[{"likes":01}]}`, false},
	{`{"platform":"x","posts":[{"likes":9223372036854775808}]}`, false},
	{`{"platform":"x","posts":[{"likes":"5"}]}`, false},
	{`{"platform":"x","posts":[{"body":"text"}]}`, false},
	{`{"platform":"x","posts":[{"body":["a",1]}]}`, false},
	{`{"platform":"x","posts":null}`, false},
	{`{"platform":"x","posts":{}}`, false},
	{`{"platform":"x","posts":["no"]}`, false},
	{`{"platform":1}`, false},
	{`{"platform":null,"posts":[]}`, false},
	{`{"posts":[]}`, false},
	{`{}`, false},
	{`{"poſts":[],"platform":"x"}`, false},
	{`{"plat\u0066orm":"x"}`, false},
	{`{"platform":"x"} x`, false},
	{`{"platform":"x"}{}`, false},
	{`{"platform":"x",}`, false},
	{`{"platform":"x","posts":[{"body":["a",]}]}`, false},
	{`{"platform":"x","posts":[{},]}`, false},
	{`{"platform":"x","posts":[{"a":[1,]}]}`, false},
	{`{"platform":"x","posts":[{"a":{"b":1,}}]}`, false},
	{`{"platform":"x","posts":[{"a":tru}]}`, false},
	{`{"platform":"x","posts":[{"a":-}]}`, false},
	{`{"platform":"x","posts":[{"a":1.}]}`, false},
	{`{"platform":"x","posts":[{"a":1e}]}`, false},
	{`{"platform":"x","posts":[{"a":"\x"}]}`, false},
	{"{\"platform\":\"x\x01\"}", false},
	{`{"platform":"x","extra":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, false},
	{`{"platform":"x","posts":[` + strings.TrimSuffix(strings.Repeat(`{},`, core.MaxIngestBatch+1), ",") + `]}`, false},
	{"\ufeff{\"platform\":\"x\"}", false},
	{`{"platform":"x"`, false},
	{`{"platform":"x`, false},
	{``, false},
}

func TestParseIngestAgreesWithEncodingJSON(t *testing.T) {
	for _, tc := range ingestBodies {
		if fast := checkParseIngest(t, []byte(tc.body)); fast != tc.fast {
			t.Errorf("parseIngest(%q) took it: %v, want %v", tc.body, fast, tc.fast)
		}
	}
}

// checkParseIngest fails t if parseIngest takes body and its answer is
// not exactly encoding/json's; it reports whether parseIngest took it.
func checkParseIngest(t *testing.T, body []byte) bool {
	t.Helper()
	platform, posts, ok := parseIngest(body)
	if !ok {
		return false
	}
	var whole struct {
		Platform *string          `json:"platform"`
		Posts    []ingestPostJSON `json:"posts"`
	}
	if err := json.Unmarshal(body, &whole); err != nil || whole.Platform == nil {
		t.Fatalf("parseIngest took %q, which encoding/json refuses (%v) or finds no platform in", body, err)
	}
	if whole.Posts == nil {
		whole.Posts = []ingestPostJSON{} // absent: the same empty batch
	}
	if *whole.Platform != platform || !reflect.DeepEqual(whole.Posts, posts) {
		t.Fatalf("body %q:\nparseIngest  %q %#v\nencoding/json %q %#v", body, platform, posts, *whole.Platform, whole.Posts)
	}
	return true
}
