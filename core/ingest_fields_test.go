package core_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

func ms(v float64) *float64 { return &v }

// A helper's title and postedAt are kept as the reddit reader keeps its
// own: the title trimmed, cleaned and cut like the text, the time to the
// microsecond; a time that is no time since 1970 makes the row invalid.
func TestIngestPostTitleAndTime(t *testing.T) {
	base := core.IngestPost{ExternalID: "1", Body: []string{"text"}, URL: "https://x.com/1"}
	for _, tc := range []struct {
		name   string
		title  string
		posted *float64
		want   core.Post // zero: invalid
	}{
		{"none", "", nil, core.Post{}},
		{"title", "  Ac\x00me?\n", nil, core.Post{Title: "Acme?"}},
		{"long title", strings.Repeat("é", core.MaxPostText+5), nil, core.Post{Title: strings.Repeat("é", core.MaxPostText)}},
		{"postedAt", "", ms(1767225600123.456), core.Post{PostedAt: time.UnixMicro(1767225600123456).UTC()}},
		{"postedAt whole", "", ms(1000), core.Post{PostedAt: time.UnixMilli(1000).UTC()}},
		{"postedAt negative", "", ms(-1), core.Post{ExternalID: "invalid"}},
		{"postedAt past 9999", "", ms(253402300800000), core.Post{ExternalID: "invalid"}},
		{"postedAt not finite", "", ms(math.Inf(1)), core.Post{ExternalID: "invalid"}},
	} {
		ip := base
		ip.Title, ip.PostedAt = tc.title, tc.posted
		got, err := ip.Post()
		if tc.want.ExternalID == "invalid" {
			if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), "postedAt") {
				t.Errorf("%s: Post = %+v, %v; want postedAt invalid", tc.name, got, err)
			}
			continue
		}
		if err != nil || got.Title != tc.want.Title || !got.PostedAt.Equal(tc.want.PostedAt) {
			t.Errorf("%s: Post = title %q postedAt %v, %v; want %q, %v", tc.name, got.Title, got.PostedAt, err, tc.want.Title, tc.want.PostedAt)
		}
	}
}

// The title is searched like a body part, as the reddit reader searches a
// post's title: on its own, so a phrase never spans title and body.
func TestIngestPostPartsHoldTheTitle(t *testing.T) {
	parts := core.IngestPost{Title: "ac\x00me crm", Body: []string{"text"}}.Parts()
	if len(parts) != 2 || parts[0] != "acme crm" || parts[1] != "text" {
		t.Fatalf("Parts = %q, want the title as stored, then the body", parts)
	}
}

// A reddit post's community is read as a phrase's is; x and facebook
// have none, whatever a helper sends.
func TestIngestPostCommunity(t *testing.T) {
	for _, tc := range []struct {
		platform  core.Platform
		community string
		want      string // "!": invalid
	}{
		{core.Reddit, "/r/SaaS/", "saas"},
		{core.Reddit, "saas", "saas"},
		{core.Reddit, "", "!"},
		{core.Reddit, "no such name!", "!"},
		{core.X, "anything", ""},
		{core.Facebook, "a group", ""},
	} {
		got, err := core.IngestPost{Community: tc.community}.CommunityOn(tc.platform)
		if tc.want == "!" {
			if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), "community") {
				t.Errorf("CommunityOn(%s, %q) = %q, %v; want invalid", tc.platform, tc.community, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CommunityOn(%s, %q) = %q, %v; want %q", tc.platform, tc.community, got, err, tc.want)
		}
	}
}
