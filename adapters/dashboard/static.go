package dashboard

import (
	"embed"
	"net/http"
	"path"
	"strconv"
)

//go:embed static
var staticFS embed.FS

var staticTypes = map[string]string{
	".css": "text/css; charset=utf-8",
	".js":  "text/javascript; charset=utf-8",
	".svg": "image/svg+xml",
}

// static serves the embedded stylesheet, script and icon.
func (d *Dashboard) static(w http.ResponseWriter, r *http.Request) {
	d.serveStatic(w, r, r.PathValue("file"))
}

// favicon answers the address browsers ask for an icon at whatever a
// page names: the dashboard's own icon, SVG as browsers accept there.
func (d *Dashboard) favicon(w http.ResponseWriter, r *http.Request) {
	d.serveStatic(w, r, "icon.svg")
}

func (d *Dashboard) serveStatic(w http.ResponseWriter, r *http.Request, name string) {
	ctype, ok := staticTypes[path.Ext(name)]
	if !ok {
		d.notFound(w, r)
		return
	}
	b, err := staticFS.ReadFile("static/" + name)
	if err != nil {
		d.notFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}
