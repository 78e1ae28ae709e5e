package httpapi

import (
	"context"
	"iter"
	"log/slog"
	"net/http"
	"time"

	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// GET /api/v1/matches/export: the view GET /matches pages through,
// written whole as one file (an extension, x-extension in the OpenAPI
// document). It is one request against the key's rate limit, like any
// other, however long it streams.

type exportRequest struct {
	query  ports.MatchQuery
	format record.Format
	head   bool // HEAD: the answer's status and headers only
}

// decodeExport reads GET /matches's parameters and the format; a limit
// is refused, since the file holds every match of the view.
func decodeExport(ctx context.Context, r *http.Request) (any, error) {
	q, err := query(r)
	if err != nil {
		return nil, err
	}
	if _, ok := q["limit"]; ok {
		return nil, core.Errorf(core.KindInvalid, "limit does not apply to an export: the file holds every match of the view")
	}
	if err := onlyOnce(q, "format"); err != nil {
		return nil, err
	}
	v, ok := single(q["format"])
	if !ok {
		return nil, core.Errorf(core.KindInvalid, "format is required: csv or jsonl")
	}
	format, err := record.ParseFormat(v)
	if err != nil {
		return nil, err
	}
	mq, err := decodeListMatches(ctx, r)
	if err != nil {
		return nil, err
	}
	return exportRequest{query: mq.(ports.MatchQuery), format: format, head: r.Method == http.MethodHead}, nil
}

func (a *API) exportMatches(ctx context.Context, req any) (any, error) {
	r := req.(exportRequest)
	owner := keyFrom(ctx).OwnerID
	if r.head {
		// The server drops a HEAD's body but not the work of writing it:
		// without this, a HEAD would read every page and hold the
		// owner's export while it did. It answers what GET would.
		if a.exportBusy(owner) {
			return nil, errExportBusy()
		}
		if _, err := a.deps.Matches.Export(ctx, owner, r.query); err != nil {
			return nil, err
		}
		return download{format: r.format, at: time.Now(), log: a.cfg.Logger, done: func() {}}, nil
	}
	if !a.startExport(owner) {
		return nil, errExportBusy()
	}
	pages, err := a.deps.Matches.Export(ctx, owner, r.query)
	if err != nil {
		a.endExport(owner)
		return nil, err
	}
	return download{format: r.format, at: time.Now(), pages: pages, log: a.cfg.Logger, done: func() { a.endExport(owner) }}, nil
}

// exportRetryAfter is the Retry-After, in seconds, of an export refused
// while another of the owner's is written.
const exportRetryAfter = 10

// startExport reserves the owner's one export in this process, as the
// dashboard does its downloads; false when it is taken. An export is one
// request of the rate limit however long it streams, and a client may
// take up to exportWriteWait over each page: without this bound a key
// could hold open a goroutine, a page and a database read for every
// request its rate limit allows. The map holds only owners with an
// export under way.
func (a *API) startExport(owner string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.exporting[owner] {
		return false
	}
	a.exporting[owner] = true
	return true
}

func errExportBusy() error {
	return core.Errorf(core.KindRateLimited, "an export of yours is still being written: once it has finished, ask for this one again (retry after %d seconds)", exportRetryAfter)
}

// exportBusy says whether the owner's export is taken, without taking it.
func (a *API) exportBusy(owner string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.exporting[owner]
}

func (a *API) endExport(owner string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.exporting, owner)
}

// download is an answer written as it is read: a file of matches, page
// by page.
type download struct {
	format record.Format
	at     time.Time                      // names the file
	pages  iter.Seq2[[]core.Match, error] // nil for a HEAD
	log    *slog.Logger
	done   func() // frees the owner's export (startExport), once written
}

// exportWriteWait is how long the client may take to read one page of an
// export: each page moves the connection's write deadline, which would
// otherwise end a long export at the server's write timeout.
const exportWriteWait = 30 * time.Second

// write sends the file: each page is flushed to the client before the
// next is read, so neither side holds more than a page. A page that
// fails once the answer has begun aborts the connection, so the client
// sees a broken transfer rather than a file that looks whole. Nothing it
// meets is an error for the encoder to answer: the answer has begun.
func (d download) write(ctx context.Context, w http.ResponseWriter) error {
	defer d.done()
	h := w.Header()
	h.Set("Content-Type", d.format.ContentType())
	h.Set("Content-Disposition", `attachment; filename="`+d.format.FileName(d.at)+`"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush() // the download starts at once
	if d.pages == nil {
		return nil
	}
	out := record.NewWriter(w, d.format)
	for page, err := range d.pages {
		if err != nil {
			if ctx.Err() == nil {
				d.log.ErrorContext(ctx, "export failed", "err", err)
			}
			panic(http.ErrAbortHandler)
		}
		_ = rc.SetWriteDeadline(time.Now().Add(exportWriteWait))
		for _, m := range page {
			_ = out.Write(m) // a failed write is seen by Flush
		}
		if out.Flush() != nil {
			return nil // the client went away: nothing more to say to it
		}
		_ = rc.Flush()
	}
	_ = rc.SetWriteDeadline(time.Now().Add(exportWriteWait))
	_ = out.Flush()
	return nil
}
