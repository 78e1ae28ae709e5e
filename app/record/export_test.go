package record_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
)

var exported = []core.Match{
	{
		ID: "m1", Phrase: "acme", Platform: core.X, CreatedAt: time.UnixMicro(1_767_225_600_123_456).UTC(),
		Score: &core.Score{Value: 82, Intent: core.IntentBuying, Reason: "asks, \"ready\" to buy"},
		Post: core.Post{Author: "=cmd|' /C calc'!A0", Title: "+1, comma", Text: "line one\nline \"two\", with commas\r\n@mention",
			URL: "https://x.com/1", Likes: 3, Comments: 1, PostedAt: time.UnixMilli(1_767_225_000_000).UTC()},
	},
	{
		ID: "m2", Phrase: "acme", Platform: core.Reddit, CreatedAt: time.UnixMicro(1_767_225_500_000_000).UTC(),
		Post: core.Post{Author: "-dash", Text: "\tstarts with a tab <b>&amp;</b>", URL: ""},
	},
}

// CSV: a header, then a row per match in RFC 4180 quoting, with a cell
// that a spreadsheet would read as a formula made text by a leading '.
func TestCSV(t *testing.T) {
	var b bytes.Buffer
	w := record.NewWriter(&b, record.CSV)
	for _, m := range exported {
		if err := w.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\r\n") {
		t.Errorf("rows do not end in CRLF")
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"id", "createdAt", "phrase", "platform", "score", "intent", "reason", "author", "title", "text", "url", "likes", "comments", "postedAt"},
		{"m1", "2026-01-01T00:00:00.123456Z", "acme", "x", "82", "buying", "asks, \"ready\" to buy", "'=cmd|' /C calc'!A0", "'+1, comma",
			"line one\r\nline \"two\", with commas\r\n@mention", "https://x.com/1", "3", "1", "2025-12-31T23:50:00Z"},
		{"m2", "2025-12-31T23:58:20Z", "acme", "reddit", "", "", "", "'-dash", "", "'\tstarts with a tab <b>&amp;</b>", "", "0", "0", ""},
	}
	// encoding/csv reads a quoted CRLF back as LF.
	want[1][9] = strings.ReplaceAll(want[1][9], "\r\n", "\n")
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("rows\n%q\nwant\n%q", rows, want)
	}

	var empty bytes.Buffer
	if err := record.NewWriter(&empty, record.CSV).Flush(); err != nil || !strings.HasPrefix(empty.String(), "id,createdAt,") {
		t.Fatalf("an empty export is %q, %v: want its header", empty.String(), err)
	}
}

// JSON Lines: each line is one match's record, as GET /matches/{id}
// returns it.
func TestJSONL(t *testing.T) {
	var b bytes.Buffer
	w := record.NewWriter(&b, record.JSONL)
	for _, m := range exported {
		if err := w.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&b)
	i := 0
	for ; sc.Scan(); i++ {
		var got record.Match
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if want := record.NewMatch(exported[i]); !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d: %+v, want %+v", i+1, got, want)
		}
	}
	if i != len(exported) {
		t.Fatalf("%d lines", i)
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[string]record.Format{"csv": record.CSV, "jsonl": record.JSONL} {
		f, err := record.ParseFormat(in)
		if err != nil || f != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, f, err)
		}
	}
	for _, bad := range []string{"", "CSV", "json", "xlsx"} {
		if _, err := record.ParseFormat(bad); !core.IsKind(err, core.KindInvalid) {
			t.Errorf("ParseFormat(%q) = %v, want KindInvalid", bad, err)
		}
	}
	at := time.Date(2026, 3, 4, 23, 30, 0, 0, time.UTC)
	if got := record.CSV.FileName(at); got != "earshot-matches-2026-03-04.csv" {
		t.Errorf("FileName = %q", got)
	}
	if got := record.JSONL.FileName(at); got != "earshot-matches-2026-03-04.jsonl" {
		t.Errorf("FileName = %q", got)
	}
	if record.CSV.ContentType() != "text/csv; charset=utf-8" || record.JSONL.ContentType() != "application/x-ndjson; charset=utf-8" {
		t.Errorf("content types %q, %q", record.CSV.ContentType(), record.JSONL.ContentType())
	}
}
