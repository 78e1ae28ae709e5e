package record

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/earshothq/earshot/core"
)

// Format is the file format of an export of matches: CSV for
// spreadsheets, JSON Lines for programs.
type Format string

const (
	CSV   Format = "csv"
	JSONL Format = "jsonl"
)

// ParseFormat reads an export's format. KindInvalid names format.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case CSV, JSONL:
		return f, nil
	}
	return "", core.Errorf(core.KindInvalid, "format must be csv or jsonl")
}

// ContentType is the media type of a file in the format.
func (f Format) ContentType() string {
	if f == JSONL {
		return "application/x-ndjson; charset=utf-8"
	}
	return "text/csv; charset=utf-8"
}

// FileName names an export made at t (its date in UTC).
func (f Format) FileName(t time.Time) string {
	return "earshot-matches-" + t.UTC().Format("2006-01-02") + "." + string(f)
}

// csvHeader names the columns of a CSV export: the record's fields, the
// post's flattened.
var csvHeader = []string{"id", "createdAt", "phrase", "platform", "score", "intent", "reason",
	"author", "title", "text", "url", "likes", "comments", "postedAt"}

// Writer writes matches in a format through a buffer: Flush sends what
// it holds, as an export does after each page.
type Writer struct {
	format Format
	buf    *bufio.Writer
	csv    *csv.Writer
	json   *json.Encoder
	row    []string
}

// NewWriter returns a writer of f to w; a CSV file starts with its
// header.
func NewWriter(w io.Writer, f Format) *Writer {
	out := &Writer{format: f, buf: bufio.NewWriterSize(w, 32<<10)}
	if f == JSONL {
		out.json = json.NewEncoder(out.buf)
		return out
	}
	out.csv = csv.NewWriter(out.buf)
	out.csv.UseCRLF = true // RFC 4180
	_ = out.csv.Write(csvHeader)
	out.row = make([]string, len(csvHeader))
	return out
}

// Write writes m: in JSON Lines its record (NewMatch) on a line; in CSV
// a row, every cell text a spreadsheet could take for a formula made
// text with a leading ' (spreadsheet formula injection: the post's text
// is a stranger's).
func (w *Writer) Write(m core.Match) error {
	if w.json != nil {
		return w.json.Encode(NewMatch(m))
	}
	score, intent, reason := "", "", ""
	if m.Score != nil {
		score, intent, reason = strconv.Itoa(m.Score.Value), string(m.Score.Intent), m.Score.Reason
	}
	posted := ""
	if !m.Post.PostedAt.IsZero() {
		posted = m.Post.PostedAt.UTC().Format(time.RFC3339Nano)
	}
	r := w.row
	r[0], r[1], r[2], r[3], r[4], r[5], r[6] = m.ID, m.CreatedAt.UTC().Format(time.RFC3339Nano), m.Phrase, string(m.Platform), score, intent, reason
	r[7], r[8], r[9], r[10] = m.Post.Author, m.Post.Title, m.Post.Text, m.Post.URL
	r[11], r[12], r[13] = strconv.Itoa(m.Post.Likes), strconv.Itoa(m.Post.Comments), posted
	for i, cell := range r {
		r[i] = inert(cell)
	}
	return w.csv.Write(r)
}

// Flush writes what the buffers hold.
func (w *Writer) Flush() error {
	if w.csv != nil {
		w.csv.Flush()
		if err := w.csv.Error(); err != nil {
			return err
		}
	}
	return w.buf.Flush()
}

// inert prefixes with ' a cell that starts as a spreadsheet formula
// does: = + - @, a tab or a carriage return (OWASP, "CSV Injection").
// The cells earshot writes itself (numbers, times, ids) never start so.
func inert(cell string) string {
	if cell == "" {
		return cell
	}
	switch cell[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + cell
	}
	return cell
}
