package dashboard

import (
	"context"
	"iter"
	"net/http"
	"time"

	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/ports"
)

// ExportService exports a view of the inbox page by page. app.Inbox is
// one.
type ExportService interface {
	// Export returns every item of q's view, newest first, page by
	// page. KindInvalid before anything is read.
	Export(ctx context.Context, ownerID string, q ports.InboxQuery) (iter.Seq2[[]ports.InboxItem, error], error)
}

// exportWriteWait is how long the browser may take to read one page of
// an export: each page moves the connection's write deadline, which
// would otherwise end a long export at the server's write timeout.
const exportWriteWait = 30 * time.Second

// exportInbox downloads the inbox's view (its filters and search, as
// the page's address carries them) as CSV or JSON Lines, streamed a page
// at a time. An owner runs one export at a time, whatever the number of
// sessions: a second, while the first runs, is answered 429.
func (d *Dashboard) exportInbox(w http.ResponseWriter, r *http.Request) {
	if d.deps.Exports == nil {
		d.notFound(w, r)
		return
	}
	ctx := r.Context()
	owner := session(r).OwnerID
	format, err := record.ParseFormat(r.URL.Query().Get("format"))
	var q ports.InboxQuery
	if err == nil {
		q, err = parseFilter(r.URL.Query()).query()
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	// The server drops a HEAD's body but not the work of writing it: a
	// HEAD would read every page and hold the owner's export meanwhile.
	head := r.Method == http.MethodHead
	if head && !d.exportBusy(owner) {
		if _, err := d.deps.Exports.Export(ctx, owner, q); err != nil {
			d.fail(w, r, err)
			return
		}
		d.startDownload(w, format)
		return
	}
	if head || !d.startExport(owner) {
		w.Header().Set("Retry-After", "10")
		d.render(w, r, http.StatusTooManyRequests, "error", &errorView{
			layout:  layout{Title: "Export already running", SignedIn: true},
			Message: "An export of yours is still being written. Once it has finished, download this one again."})
		return
	}
	defer d.endExport(owner)
	pages, err := d.deps.Exports.Export(ctx, owner, q)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.startDownload(w, format)
	// As the API's export writes (httpapi/export.go): the download
	// starts at once, each page reaches the browser before the next is
	// read, and a page that fails cuts the connection, so a file that
	// ends cleanly is whole.
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	out := record.NewWriter(w, format)
	for items, err := range pages {
		if err != nil {
			if ctx.Err() == nil {
				d.cfg.Logger.ErrorContext(ctx, "export failed", "err", err)
			}
			panic(http.ErrAbortHandler)
		}
		_ = rc.SetWriteDeadline(time.Now().Add(exportWriteWait))
		for _, it := range items {
			_ = out.Write(it.Match) // a failed write is seen by Flush
		}
		if out.Flush() != nil {
			return // the browser went away
		}
		_ = rc.Flush()
	}
	_ = rc.SetWriteDeadline(time.Now().Add(exportWriteWait))
	_ = out.Flush()
}

// startDownload answers 200 with the headers of a download of format,
// which a HEAD shows as its GET would.
func (d *Dashboard) startDownload(w http.ResponseWriter, format record.Format) {
	h := w.Header()
	h.Set("Content-Type", format.ContentType())
	h.Set("Content-Disposition", `attachment; filename="`+format.FileName(d.cfg.Now())+`"`)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// startExport reserves the owner's one export; false when it is taken
// or the dashboard is closing.
func (d *Dashboard) startExport(owner string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped || d.exporting[owner] {
		return false
	}
	d.exporting[owner] = true
	return true
}

// exportBusy says whether the owner's export is taken, without taking it.
func (d *Dashboard) exportBusy(owner string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stopped || d.exporting[owner]
}

func (d *Dashboard) endExport(owner string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.exporting, owner)
}
