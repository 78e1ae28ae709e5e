package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
)

type requestIDKey struct{}

// RequestID returns the id of the request ctx belongs to, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// validRequestID accepts a caller's id only when it is short and plain, so
// it can go into logs and headers as it is.
func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// RequestLog gives every request an id (the caller's X-Request-Id when it
// is plain, else a new one), returns it in the X-Request-Id header, puts
// it in the context so every log line of the request carries it, logs
// one line per request and hands the answer's status and duration to
// observe (the metrics), so one writer records the status for both. The
// line holds no header, query or body, and no token a path carries
// (loggedPath): keys, cookies and links never reach the log.
func RequestLog(log *slog.Logger, observe func(method, path string, status int, d time.Duration), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		w.Header().Set("X-Request-Id", id)
		ctx := context.WithValue(r.Context(), requestIDKey{}, id)
		designed := new(bool) // set by answeredAsDesigned
		ctx = context.WithValue(ctx, designedKey{}, designed)
		start := time.Now()
		sw := &codeWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r.WithContext(ctx))
		d := time.Since(start)
		observe(r.Method, r.URL.Path, sw.code, d)
		level := requestLevel(sw.code, d, sw.Header())
		if *designed {
			level = slog.LevelDebug
		}
		if log.Enabled(ctx, level) {
			log.Log(ctx, level, "request", "method", r.Method, "path", loggedPath(r.URL.Path), "status", sw.code,
				"duration_ms", float64(d.Microseconds())/1000)
		}
	})
}

// loggedPath is path as the request log writes it: a segment of a
// token's form (a sign-in link's, an address confirmation's) is written
// as {token}, since whoever reads it could use the link.
func loggedPath(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if core.WellFormedToken(s) {
			segs[i] = "{token}"
		}
	}
	return strings.Join(segs, "/")
}

// slowRequest is how long an answer may take before its request is
// logged at info level like a refused one.
const slowRequest = time.Second

// requestLevel is the level a request's line is logged at: a quick
// answer that went well is routine (debug: the metrics count it), a
// refusal or a slow answer is worth an operator's eye (info), a failure
// on our side is a warning. At the default level a busy server then
// writes nothing per request it served well; a line per request cost
// the read path a tenth of its time. h is the answer's header: a
// Server-Sent Events stream (text/event-stream, the dashboard's
// /app/events) stays open as long as its page, and a download (an
// attachment: an export) as long as its file takes, so their length is
// never slowness.
func requestLevel(status int, d time.Duration, h http.Header) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelWarn
	case status >= 400 || d >= slowRequest && !stream(h):
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// stream tells whether an answer with header h is an event stream or a
// download.
func stream(h http.Header) bool {
	if d, _, err := mime.ParseMediaType(h.Get("Content-Disposition")); err == nil && d == "attachment" {
		return true
	}
	t, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && t == "text/event-stream"
}

type codeWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *codeWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *codeWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// LogHandler adds the request id of the context to every record.
func LogHandler(h slog.Handler) slog.Handler { return requestIDHandler{h} }

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(as)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
