package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// The answers an ingest body can get, as code: message.
const (
	notObject    = "invalid_json: request body must be a JSON object"
	wrongShape   = "invalid_parameter: platform must be a string and posts an array"
	noPlatform   = "invalid_parameter: platform is required: facebook, x or reddit"
	overTheLimit = "invalid_parameter: posts must hold at most 100 posts, got 101"
)

// ingestBodies are tricky bodies and the answer each gets: "" for a
// batch, whose posts must be exactly encoding/json's (checkReadIngest).
var ingestBodies = []struct {
	body string
	want string
}{
	{`{"platform":"x","posts":[{"externalId":"1","authorName":"a","body":["hi"],"url":"https://x.com/1","likes":3,"comments":0}]}`, ""},
	{`{"platform":"x","posts":[]}`, ""},
	{`{"platform":"x"}`, ""},
	{"\t{ \"platform\" : \"x\" ,\r\n \"posts\" : [ { } , null ] }\n", ""},
	{` {"platform":"x"} `, ""},
	{`{"PLATFORM":"x","Posts":[{"EXTERNALID":"1","Body":["a"],"URL":"https://x.com/1","LIKES":3,"authorNAME":"b"}]}`, ""},
	{`{"platform":"x","posts":[{"externalId":"1","body":["a\nb \"q\" \\ \/","\u00e9\ud83d\ude00","\ud800 lone"],"url":"https://x.com/1"}]}`, ""},
	{`{"platform":"x","posts":[{"body":["\ud800\udc00","\udc00","\ud83d"]}]}`, ""},
	{"{\"platform\":\"x\",\"posts\":[{\"externalId\":\"\xff\xfe\",\"body\":[\"a\xc3\",\"\xed\xa0\x80\"],\"authorName\":\"é—ok\"}]}", ""},
	{"{\"platform\":\"x\xff\"}", ""},
	{"{\"pl\xffatform\":\"x\"}", noPlatform},
	{`{"platform":"x","posts":[null,{"externalId":null,"body":null,"likes":null,"comments":null,"url":null},{"body":[null,"a"]},{"body":[]}]}`, ""},
	{`{"extra":{"a":[1,2,{"b":null}],"c":"\"q\"","ſ":0},"platform":"x","posts":[{"title":"t","x":[true,false,-1.5e-3,0,1E+2]}]}`, ""},
	{`{"platform":"x","posts":[{"likes":-0,"comments":9223372036854775807}]}`, ""},
	{`{"platform":"x","posts":[{"likes":-9223372036854775808,"comments":-9223372036854775809}]}`, ""},
	{`{"platform":"reddit","posts":[{"title":"T\u00e9","postedAt":1767225600123.456,"community":"r/SaaS"},{"postedAt":-0},{"postedAt":1.5e12},{"POSTEDAT":0,"Title":null,"community":null},{"postedAt":null}]}`, ""},
	{`{"platform":"x","posts":[{"postedAt":1e400}]}`, ""},
	{`{"platform":"x","posts":[{"postedAt":"1"}]}`, ""},
	{`{"platform":"x","posts":[{"postedAt":01}]}`, notObject},
	{`{"platform":"x","posts":[{"postedAt":1,"postedAt":2}]}`, ""},
	{`{"platform":"x","posts":[{"title":["t"]}]}`, ""},
	{`{"platform":"x","posts":[{"community":1}]}`, ""},
	{`{"platform":"x\u0000","posts":[]}`, ""},
	{`{"platform":"x","platform":"y"}`, ""},
	{`{"platform":"x","platform":null}`, noPlatform},
	{`{"platform":null,"platform":"y"}`, ""},
	{`{"platform":"x","posts":[],"posts":[]}`, ""},
	{`{"platform":"x","posts":[{"likes":1,"likes":2}]}`, ""},
	{`{"platform":"x","posts":[{"externalId":"1","EXTERNALID":"2"}]}`, ""},
	{`{"platform":"x","posts":[{"\u212aey":1,"\u017fcore":2,"LIKEs":7}]}`, ""},
	{`{"platform":"x","posts":[{"likes":1.0}]}`, ""},
	{`{"platform":"x","posts":[{"likes":1e2}]}`, ""},
	{`{"platform":"x","posts":[{"likes":01}]}`, notObject},
	{`{"platform":"x","posts":[{"likes":9223372036854775808}]}`, ""},
	{`{"platform":"x","posts":[{"likes":"5"}]}`, ""},
	{`{"platform":"x","posts":[{"body":"text"}]}`, ""},
	{`{"platform":"x","posts":[{"body":["a",1]}]}`, ""},
	{`{"platform":"x","posts":[{"likes":"x","url":"u"},{"externalId":"b"},[1,{"externalId":"c"}],"no",7]}`, ""},
	{`{"platform":"x","posts":[{"body":["a",1,"b"],"likes":2,"x":{"y":[1]}},{"externalId":"after"},{"body":[[1,{"x":"y"}]],"url":"u"},{"url":"v"}]}`, ""},
	{`{"platform":"x","posts":[{"likes":{"a":[1,{"b":2}]},"url":"u"},{"url":"v"}],"platform":"y"}`, ""},
	{`{"platform":"x","posts":null}`, ""},
	{`{"platform":"x","posts":{}}`, wrongShape},
	{`{"platform":"x","posts":["no"]}`, ""},
	{`{"platform":1}`, wrongShape},
	{`{"platform":"x","posts":"no","posts":[]}`, wrongShape},
	{`{"platform":null,"posts":[]}`, noPlatform},
	{`{"posts":[]}`, noPlatform},
	{`{}`, noPlatform},
	{`{"poſts":[],"platform":"x"}`, ""},
	{`{"plat\u0066orm":"x"}`, ""},
	// Two posts arrays: encoding/json decodes the second over what the
	// first left, unless some row is not a post: then each row of the
	// last stands alone.
	{`{"platform":"x","posts":[{"likes":3,"body":["a"]}],"posts":[{"likes":4}]}`, ""},
	{`{"platform":"x","posts":[{"likes":3,"body":["a"]}],"posts":[null]}`, ""},
	{`{"platform":"x","posts":[{"likes":1,"body":["a","b"]}],"posts":[{"body":["c"]}]}`, ""},
	{`{"platform":"x","posts":[{"body":["a","b"],"postedAt":5}],"posts":[{"body":null,"postedAt":null}]}`, ""},
	{`{"platform":"x","posts":[{"externalId":"a"},{"externalId":"b","body":["z"]}],"posts":[{}, {}, {}]}`, ""},
	{`{"platform":"x","posts":[{"likes":3},{"url":"u"}],"posts":null,"posts":[{},{}]}`, ""},
	{`{"platform":"x","posts":[{"likes":3,"body":["a"]},{"url":"u"}],"posts":[{"likes":4},{"likes":"x"}]}`, ""},
	{`{"platform":"x","posts":[{"likes":"x"}],"posts":[{"likes":4}]}`, ""},
	{`{"platform":"x","posts":[{"likes":"x"}],"posts":null}`, ""},
	{`{"platform":"x","posts":[],"posts":[{"likes":"x"},{"externalId":"b"}]}`, ""},
	{`{"platform":"x"} x`, notObject},
	{`{"platform":"x"}{}`, notObject},
	{`{"platform":"x",}`, notObject},
	{`{"platform":"x","posts":[{"body":["a",]}]}`, notObject},
	{`{"platform":"x","posts":[{},]}`, notObject},
	{`{"platform":"x","posts":[{"a":[1,]}]}`, notObject},
	{`{"platform":"x","posts":[{"a":{"b":1,}}]}`, notObject},
	{`{"platform":"x","posts":[{"a":tru}]}`, notObject},
	{`{"platform":"x","posts":[{"a":-}]}`, notObject},
	{`{"platform":"x","posts":[{"a":1.}]}`, notObject},
	{`{"platform":"x","posts":[{"a":1e}]}`, notObject},
	{`{"platform":"x","posts":[{"a":"\x"}]}`, notObject},
	{"{\"platform\":\"x\x01\"}", notObject},
	{`{"platform":"x","extra":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, ""},
	// encoding/json takes values nested 10,000 deep, the object included.
	{`{"platform":"x","extra":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`, ""},
	{`{"platform":"x","extra":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`, notObject},
	{`{"platform":"x","posts":[` + strings.TrimSuffix(strings.Repeat(`{},`, core.MaxIngestBatch+1), ",") + `]}`, overTheLimit},
	{`{"platform":"x","posts":[` + strings.TrimSuffix(strings.Repeat(`{},`, core.MaxIngestBatch), ",") + `]}`, ""},
	{`{"platform":"x","posts":[` + strings.Repeat(`{},`, core.MaxIngestBatch) + `{}],"posts":[]}`, overTheLimit},
	{`{"platform":5,"posts":[` + strings.Repeat(`{},`, core.MaxIngestBatch) + `{}]}`, overTheLimit},
	{`{"posts":[` + strings.Repeat(`{},`, core.MaxIngestBatch) + `{}]}`, overTheLimit},
	{`{"platform":"x","posts":[` + strings.Repeat(`{},`, core.MaxIngestBatch) + `{}],"x":tru}`, notObject},
	{`{"platform":"x","posts":[` + strings.Repeat(`{},`, core.MaxIngestBatch) + `{},]}`, notObject},
	// Spaces JSON does not allow around the object: a body of the wrong
	// shape, unless its posts are too many before the space.
	{"\u00a0{\"platform\":\"x\"}", wrongShape},
	{"{\"platform\":\"x\"}\u00a0", wrongShape},
	{"\f{\"platform\":\"x\"}", wrongShape},
	{"{\"platform\":\"x\"}\v", wrongShape},
	{"\u0085{\"platform\":\"x\"}\u2028", wrongShape},
	{"{\"platform\":\"x\",\"posts\":[" + strings.Repeat("{},", core.MaxIngestBatch) + "{}]}\u00a0", overTheLimit},
	{"\u00a0{\"platform\":\"x\",\"posts\":[" + strings.Repeat("{},", core.MaxIngestBatch) + "{}]}", wrongShape},
	{"\ufeff{\"platform\":\"x\"}", notObject},
	{`{"platform":"x"`, notObject},
	{`{"platform":"x`, notObject},
	{`[]`, notObject},
	{`null`, notObject},
	{``, notObject},
	{" \n", notObject},
}

func TestReadIngest(t *testing.T) {
	for _, tc := range ingestBodies {
		checkReadIngest(t, []byte(tc.body))
		got := ""
		if _, err := readIngest([]byte(tc.body)); err != nil {
			got = core.KindOf(err).Code() + ": " + core.Message(err)
		}
		if got != tc.want {
			t.Errorf("readIngest(%.300q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

// checkReadIngest fails t unless readIngest answers body exactly as
// referenceIngest does: the same error, or the same platform and posts.
func checkReadIngest(t *testing.T, body []byte) {
	t.Helper()
	got, err := readIngest(body)
	want, wantErr := referenceIngest(body)
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("body %.300q: readIngest %v, encoding/json %v", body, err, wantErr)
	case err != nil:
		if core.KindOf(err) != core.KindOf(wantErr) || core.Message(err) != core.Message(wantErr) {
			t.Fatalf("body %.300q: readIngest %v, encoding/json %v", body, err, wantErr)
		}
	case got.platform != want.platform || !reflect.DeepEqual(got.posts, want.posts):
		t.Fatalf("body %.300q:\nreadIngest    %q %#v\nencoding/json %q %#v", body, got.platform, got.posts, want.platform, want.posts)
	}
}

// referenceIngest reads an ingest body with encoding/json alone, whole,
// as the server did before it read the body as a stream: the meaning
// readIngest must keep. A body that is not a JSON object is refused; then
// one whose posts array, or any member that encoding/json would read
// into posts, is over the limit; then a body encoding/json decodes with
// a platform is taken as it decodes it; otherwise the wrong shape or the
// missing platform is refused, or the rows are read one by one, a row
// that is not a post reading as the zero post.
func referenceIngest(body []byte) (ingestRequest, error) {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return ingestRequest{}, core.Errorf(core.KindInvalidJSON, "request body must be a JSON object")
	}
	if mostPosts(body) > core.MaxIngestBatch {
		return ingestRequest{}, core.CheckIngestBatch(core.MaxIngestBatch + 1)
	}
	request := func(platform string, posts []ingestPostJSON) ingestRequest {
		out := ingestRequest{platform: platform, posts: make([]core.IngestPost, len(posts))}
		for i, p := range posts {
			out.posts[i] = p.post()
		}
		return out
	}
	var whole struct {
		Platform *string          `json:"platform"`
		Posts    []ingestPostJSON `json:"posts"`
	}
	if json.Unmarshal(body, &whole) == nil && whole.Platform != nil {
		return request(*whole.Platform, whole.Posts), nil
	}
	var rows struct {
		Platform *string           `json:"platform"`
		Posts    []json.RawMessage `json:"posts"`
	}
	if err := json.Unmarshal(body, &rows); err != nil {
		return ingestRequest{}, core.Errorf(core.KindInvalid, "platform must be a string and posts an array")
	}
	if rows.Platform == nil {
		return ingestRequest{}, core.Errorf(core.KindInvalid, "platform is required: facebook, x or reddit")
	}
	posts := make([]ingestPostJSON, len(rows.Posts))
	for i, raw := range rows.Posts {
		if json.Unmarshal(raw, &posts[i]) != nil {
			posts[i] = ingestPostJSON{}
		}
	}
	return request(*rows.Platform, posts), nil
}

// mostPosts returns the length of the longest array among the members of
// the object body that encoding/json decodes into a field named posts.
func mostPosts(body []byte) int {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0
	}
	most := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return most
		}
		var value json.RawMessage
		if dec.Decode(&value) != nil {
			return most
		}
		var posts []json.RawMessage
		if name, _ := tok.(string); strings.EqualFold(name, "posts") && json.Unmarshal(value, &posts) == nil {
			most = max(most, len(posts))
		}
	}
	return most
}
